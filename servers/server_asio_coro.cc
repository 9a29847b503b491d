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
#include <boost/asio/bind_executor.hpp>

#include <chrono>
#include <memory>
#include <new>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

/*
 * Concrete executor types throughout, no any_io_executor and no strand. Asio 1.74 builds the
 * work guard of every operation in a noexcept constructor (handler_work_base), and preferring
 * outstanding work on a polymorphic executor that holds a strand allocates there: out of memory
 * it ends the process instead of throwing. Its strand creation is not exception-safe either (a
 * failed allocation destroys a half-made strand_impl, a crash). With the io_context's own
 * executor every per-connection allocation is a plain new inside the call that starts an
 * operation or a coroutine, where the caller catches it. One thread runs each io_context, so
 * the strand that spawn(io_context) would add serialises nothing.
 */
using exec = asio::io_context::executor_type;
using socket_t = asio::basic_stream_socket<tcp, exec>;
using acceptor_t = asio::basic_socket_acceptor<tcp, exec>;
using wait_timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                              asio::wait_traits<std::chrono::steady_clock>, exec>;
using descriptor_t = asio::posix::basic_stream_descriptor<exec>;
using yield_t = asio::basic_yield_context<asio::executor_binder<void (*)(), exec>>;

void coro_done() {}

/* Start f as a coroutine on the loop's own executor (see above: no strand). */
template <typename F> void spawn_on(asio::io_context &ioc, F &&f, size_t stack = 0)
{
    auto h = asio::bind_executor(ioc.get_executor(), &coro_done);
    if (stack)
        asio::spawn(h, std::forward<F>(f), boost::coroutines::attributes(stack));
    else
        asio::spawn(h, std::forward<F>(f));
}

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
    socket_t sock;
    aconn *prev = nullptr, *next = nullptr;
    bool started = false; /* its coroutine began */
    aconn(aloop &l, asio::io_context &ioc) : al(l), sock(ioc.get_executor()) {}
    ~aconn();
};

struct aloop {
    srv_server *srv = nullptr;
    int index = 0;
    asio::io_context ioc{1}; /* concurrency hint 1: one thread runs it, no locking */
    srv_acceptor acc{};
    aconn head{*this, ioc};    /* list sentinel; its socket is never opened */
    acceptor_t *lis = nullptr; /* while the acceptor coroutine runs */
    wait_timer *backoff = nullptr;
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

/* Write all of buf, one write_some at a time: each operation starts inside the coroutine, so
 * an allocation that fails throws here rather than inside a composed operation's completion,
 * which run() would meet with the coroutine's handler lost. */
bool write_all(socket_t &sock, const char *buf, size_t n, yield_t &yield)
{
    for (size_t off = 0; off < n;) {
        error_code ec;
        off += sock.async_write_some(asio::buffer(buf + off, n - off), yield[ec]);
        if (ec) return false;
    }
    return true;
}

/*
 * Read what arrives, write all of it back, until EOF or an error: the thread model's session.
 * Every read and write allocates its operation; one that finds no memory closes this
 * connection alone, counted with the connections that could not start.
 */
void session(const std::shared_ptr<aconn> &c, yield_t yield)
{
    char buf[SESSION_BUF];
    try {
        for (;;) {
            error_code ec;
            size_t n = c->sock.async_read_some(asio::buffer(buf), yield[ec]);
            if (ec || !write_all(c->sock, buf, n, yield)) break;
            c->al.bytes += n;
        }
    } catch (const std::bad_alloc &) {
        srv_add(&c->al.srv->stats->spawn_failed, 1);
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
        spawn_on(
            al.ioc,
            [c](yield_t y) {
                c->started = true;
                session(c, y);
            },
            CORO_STACK);
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
bool accept_some(aloop &al, acceptor_t &lis, wait_timer &backoff, bool wait, yield_t yield)
{
    error_code ec;
    if (wait) lis.async_wait(acceptor_t::wait_read, yield[ec]);
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
void acceptor_loop(aloop &al, yield_t yield)
{
    acceptor_t lis(al.ioc.get_executor());
    error_code ec;
    lis.assign(tcp::v4(), al.srv->listen_fd[al.index], ec);
    if (ec) {
        fprintf(stderr, "echo-server: asio cannot take the listener: %s\n", ec.message().c_str());
        srv_stop(al.srv);
        return;
    }
    wait_timer backoff(al.ioc.get_executor());
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
void stop_watch(aloop &al, descriptor_t &stop, yield_t yield)
{
    error_code ec;
    stop.async_wait(descriptor_t::wait_read, yield[ec]);
    srv_stop(al.srv); /* a loop that stopped on its own (an error) takes the others down */
    if (al.lis) al.lis->release(ec);
    if (al.backoff) al.backoff->cancel();
    for (aconn *c = al.head.next; c != &al.head; c = c->next)
        c->sock.close(ec);
}

void aloop_serve(void *arg)
{
    aloop &al = *static_cast<aloop *>(arg);
    descriptor_t stop(al.ioc.get_executor());
    error_code ec;
    stop.assign(al.srv->stop_fd[al.index], ec);
    try {
        if (!ec) {
            spawn_on(al.ioc, [&](yield_t y) { stop_watch(al, stop, y); });
            spawn_on(al.ioc, [&](yield_t y) { acceptor_loop(al, y); });
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
