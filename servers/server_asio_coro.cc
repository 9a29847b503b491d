/* server_asio_coro.cc - blocking-style echo on Boost.Asio stackful coroutines (spawn), one
 * io_context per thread. C++ because Boost.Asio is; the rest of echo-server is C. */
/* server.h's C11 atomics: C++23's <stdatomic.h> gives the same types (std::atomic), included
 * first so that it is read as C++, outside the C block. */
#include <stdatomic.h>
extern "C" {
#include "server.h"
}

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <memory>
#include <new>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace
{

constexpr size_t SESSION_BUF = 16384;    /* the fiber server's read buffer */
constexpr size_t CORO_STACK = 64 * 1024; /* the fiber server's default stack */
constexpr int ACCEPT_BUDGET = 64;

atomic_bool logged_spawn;

struct aloop;

/*
 * A connection: its socket, and its place in the loop's list so that the stop can close it.
 * Owned by a shared_ptr held by the coroutine's function object, so that whether the coroutine
 * ran to its end or could not even be started (no memory for its stack), the last owner's
 * destructor closes the socket and counts the connection as done.
 */
struct aconn {
    aloop &al;
    tcp::socket sock;
    aconn *prev = nullptr, *next = nullptr;
    bool started = false; /* its coroutine began */
    aconn(aloop &l, asio::io_context &ioc) : al(l), sock(ioc) {}
    ~aconn();
};

struct aloop {
    srv_server *srv = nullptr;
    int index = 0;
    asio::io_context ioc{1}; /* concurrency hint 1: one thread runs it, no locking */
    srv_acceptor acc{};
    aconn head{*this, ioc};       /* list sentinel; its socket is never opened */
    tcp::acceptor *lis = nullptr; /* while the acceptor coroutine runs */
    asio::steady_timer *backoff = nullptr;
    uint64_t bytes = 0;
    bool acc_ok = false;
    aloop() { head.prev = head.next = &head; }
};

aconn::~aconn()
{
    if (this == &al.head) return;
    prev->next = next;
    next->prev = prev;
    error_code ec;
    sock.close(ec);
    srv_conn_done(al.srv);
}

/* Read what arrives, write all of it back, until EOF or an error: the thread model's session. */
void session(const std::shared_ptr<aconn> &c, asio::yield_context yield)
{
    char buf[SESSION_BUF];
    try {
        for (;;) {
            error_code ec;
            size_t n = c->sock.async_read_some(asio::buffer(buf), yield[ec]);
            if (ec) break;
            asio::async_write(c->sock, asio::buffer(buf, n), yield[ec]);
            if (ec) break;
            c->al.bytes += n;
        }
    } catch (const std::bad_alloc &) {
        srv_log_once(&logged_spawn, "out of memory in a connection; connection closed");
    }
}

void conn_new(aloop &al, int fd)
{
    bool made = false; /* from here on the connection's destructor counts it done */
    try {
        auto c = std::make_shared<aconn>(al, al.ioc);
        made = true;
        c->next = al.head.next;
        c->prev = &al.head;
        al.head.next->prev = c.get();
        al.head.next = c.get();
        error_code ec;
        c->sock.assign(tcp::v4(), fd, ec); /* registers it with the loop's epoll */
        if (ec) {
            close(fd);
            srv_add(&al.srv->stats->spawn_failed, 1);
            return; /* c's destructor counts it done */
        }
        fd = -1;
        /*
         * Called from the loop's own thread, spawn starts the coroutine at once; when it cannot
         * (no memory for the stack), asio keeps the exception to rethrow from run(), so the
         * failure shows here as a coroutine that never began.
         */
        asio::spawn(
            al.ioc,
            [c](asio::yield_context y) {
                c->started = true;
                session(c, y);
            },
            boost::coroutines::attributes(CORO_STACK));
        if (!c->started) {
            srv_add(&al.srv->stats->spawn_failed, 1);
            srv_log_once(&logged_spawn, "out of memory for a connection's coroutine; "
                                        "connection closed");
        }
    } catch (const std::bad_alloc &) {
        if (fd >= 0) close(fd); /* not taken by the socket */
        if (!made) srv_conn_done(al.srv);
        srv_add(&al.srv->stats->spawn_failed, 1);
        srv_log_once(&logged_spawn,
                     "out of memory for a connection's coroutine; connection closed");
    }
}

/*
 * Wait for the listener (if wait) and accept up to a budget; returns whether to wait next.
 * Asio registers a descriptor edge-triggered: a wait reports only new readiness, so accepting
 * goes on until the listener says "nothing pending" before waiting again.
 */
bool accept_some(aloop &al, tcp::acceptor &lis, asio::steady_timer &backoff, bool wait,
                 asio::yield_context yield)
{
    error_code ec;
    if (wait) lis.async_wait(tcp::acceptor::wait_read, yield[ec]);
    if (ec || srv_stopping(al.srv)) return true;
    for (int i = 0; i < ACCEPT_BUDGET; i++) {
        int fd;
        switch (srv_accept(&al.acc, &fd, SOCK_NONBLOCK)) {
        case SRV_ACCEPT_OK:
            conn_new(al, fd);
            break;
        case SRV_ACCEPT_SKIP:
            break;
        case SRV_ACCEPT_AGAIN:
            return true;
        case SRV_ACCEPT_BACKOFF:
            backoff.expires_after(std::chrono::milliseconds(SRV_BACKOFF_MS));
            backoff.async_wait(yield[ec]);
            return false;
        }
    }
    asio::post(al.ioc.get_executor(), yield); /* a full budget: the sessions run first */
    return false;
}

/* The listener's coroutine, until the stop. */
void acceptor_loop(aloop &al, asio::yield_context yield)
{
    tcp::acceptor lis(al.ioc);
    error_code ec;
    lis.assign(tcp::v4(), al.srv->listen_fd[al.index], ec);
    if (ec) {
        fprintf(stderr, "echo-server: asio cannot take the listener: %s\n", ec.message().c_str());
        srv_stop(al.srv);
        return;
    }
    asio::steady_timer backoff(al.ioc);
    al.lis = &lis;
    al.backoff = &backoff;
    bool wait = true;
    while (!srv_stopping(al.srv)) {
        bool starved = false;
        try {
            wait = accept_some(al, lis, backoff, wait, yield);
        } catch (const std::bad_alloc &) {
            starved = true; /* no memory even for a wait: not switched away inside a catch */
        }
        if (!starved) continue;
        /* Connections that end free memory: pause, let them run, then try again. */
        srv_log_once(&logged_spawn, "out of memory for accepting; connection closed");
        usleep(SRV_BACKOFF_MS * 1000);
        wait = false;
        try {
            asio::post(al.ioc.get_executor(), yield);
        } catch (const std::bad_alloc &) {
        }
    }
    al.lis = nullptr;
    al.backoff = nullptr;
    if (lis.is_open()) lis.release(ec); /* the front end owns the listener */
}

/*
 * The stop fd turns readable: give the listener back (its wait ends, cancelled), and close
 * every connection, whose coroutines then end; the loop runs out of work and returns.
 */
void stop_watch(aloop &al, asio::posix::stream_descriptor &stop, asio::yield_context yield)
{
    error_code ec;
    stop.async_wait(asio::posix::stream_descriptor::wait_read, yield[ec]);
    srv_stop(al.srv); /* a loop that stopped on its own (an error) takes the others down */
    if (al.lis) al.lis->release(ec);
    if (al.backoff) al.backoff->cancel();
    for (aconn *c = al.head.next; c != &al.head; c = c->next)
        c->sock.close(ec);
}

void aloop_serve(void *arg)
{
    aloop &al = *static_cast<aloop *>(arg);
    asio::posix::stream_descriptor stop(al.ioc);
    error_code ec;
    stop.assign(al.srv->stop_fd[al.index], ec);
    try {
        if (!ec) {
            asio::spawn(al.ioc, [&](asio::yield_context y) { stop_watch(al, stop, y); });
            asio::spawn(al.ioc, [&](asio::yield_context y) { acceptor_loop(al, y); });
        }
        for (;;) {
            try {
                al.ioc.run();
                break;
            } catch (const std::bad_alloc &) {
                /* a failed spawn, counted where it was called */
            } catch (const asio::multiple_exceptions &) {
                /* several of them */
            }
        }
    } catch (const std::exception &e) {
        fprintf(stderr, "echo-server: asio loop failed: %s\n", e.what());
    }
    stop.release();
}

int aloop_init(void *arg, srv_server *srv, int i)
{
    aloop &al = *static_cast<aloop *>(arg);
    al.srv = srv;
    al.index = i;
    al.acc.reserve_fd = -1;
    int rc = srv_acceptor_init(&al.acc, srv, srv->listen_fd[i]);
    al.acc_ok = rc == 0;
    return rc;
}

void aloop_fini(void *arg)
{
    aloop &al = *static_cast<aloop *>(arg);
    if (al.acc_ok) srv_acceptor_fini(&al.acc);
    if (al.srv) srv_add(&al.srv->stats->bytes, al.bytes);
}

int asio_coro_run(srv_server *srv)
{
    static const srv_loop_ops ops = {"asio", sizeof(aloop), aloop_init, aloop_serve, aloop_fini};
    std::unique_ptr<aloop[]> als(new (std::nothrow) aloop[srv->nlisten]);
    if (!als) return -1;
    srv->stats->engine = "asio-epoll";
    return srv_run_loops_in(srv, als.get(), &ops);
}

} // namespace

/* The fields not named are zero, as C's designated initializers leave them (C++ warns). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
extern "C" const struct srv_model srv_model_asio_coro = {
    .name = "asio-coro",
    .summary = "Boost.Asio stackful coroutines (spawn), one io_context per thread",
    .concurrency = SRV_FIBER_PER_CONN,
    .per_thread_listener = true,
    .takes_threads = true,
    .run = asio_coro_run};
