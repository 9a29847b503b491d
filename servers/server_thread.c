/* server_thread.c - one detached kernel thread per connection runs the blocking echo session. */
#include "echo_session.h"
#include "server.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MIN_STACK    (64 * 1024) /* the session keeps SRV_ECHO_BUF bytes on its stack */
#define ACCEPT_BURST 64          /* accepts per wake-up before looking at the stop fd again */
#define DRAIN_MS     3000        /* how long shutdown waits for sessions to notice */

struct session {
    struct session *prev, *next; /* in the list of open sessions, under tm.lock */
    struct srv_server *srv;
    int fd;
};

/*
 * The list of open sessions exists only so that shutdown can wake every blocked thread with
 * shutdown(2). It has static storage because detached threads may outlive run() if a
 * session ignores shutdown for longer than DRAIN_MS; the process exits right after.
 */
static struct {
    pthread_mutex_t lock;
    struct session head;
    atomic_int live;
} tm = {.lock = PTHREAD_MUTEX_INITIALIZER, .head = {&tm.head, &tm.head, NULL, -1}};

static atomic_bool logged_spawn;

/*
 * Timeouts are the kernel's: SO_RCVTIMEO bounds every recv (by the shorter of --read-timeout
 * and --idle-timeout), SO_SNDTIMEO every send that makes no progress (--idle-timeout), and the
 * call then fails with EAGAIN, which on a blocking socket means exactly that. A send that
 * moved some bytes returns them, so the idle clock restarts with every byte, as it should.
 */
static ssize_t s_read(void *ctx, void *buf, size_t len)
{
    struct session *s = ctx;
    ssize_t n = recv(s->fd, buf, len, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        const struct srv_options *o = s->srv->opt;
        bool read =
            o->read_timeout_ms && (!o->idle_timeout_ms || o->read_timeout_ms < o->idle_timeout_ms);
        srv_add(read ? &s->srv->stats->read_timeouts : &s->srv->stats->idle_timeouts, 1);
    }
    return n;
}

static ssize_t s_write(void *ctx, const void *buf, size_t len)
{
    struct session *s = ctx;
    ssize_t n = send(s->fd, buf, len, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        srv_add(&s->srv->stats->idle_timeouts, 1);
    return n;
}

static struct timeval ms_timeval(long ms)
{
    return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
}

/* The socket timeouts of the options on a new connection; -1 when the kernel refuses them. */
static int set_timeouts(int fd, const struct srv_options *o)
{
    long rcv = o->read_timeout_ms;
    if (o->idle_timeout_ms && (!rcv || o->idle_timeout_ms < rcv)) rcv = o->idle_timeout_ms;
    struct timeval r = ms_timeval(rcv), w = ms_timeval(o->idle_timeout_ms);
    if (rcv && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &r, sizeof r) < 0) return -1;
    if (o->idle_timeout_ms && setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &w, sizeof w) < 0) return -1;
    return 0;
}

/* Leave the list before closing, so shutdown never touches an fd number reused elsewhere. */
static int s_close(void *ctx)
{
    struct session *s = ctx;
    pthread_mutex_lock(&tm.lock);
    s->prev->next = s->next;
    s->next->prev = s->prev;
    pthread_mutex_unlock(&tm.lock);
    return close(s->fd);
}

static void *session_main(void *arg)
{
    struct session *s = arg;
    struct srv_server *srv = s->srv;
    char buf[SRV_ECHO_BUF];
    struct srv_io io = {s_read, s_write, s_close, s};
    srv_echo_session(&io, buf, sizeof buf, &srv->stats->bytes);
    free(s);
    srv_conn_done(srv);
    atomic_fetch_sub(&tm.live, 1);
    return NULL;
}

static void spawn(struct srv_server *srv, const pthread_attr_t *attr, int fd)
{
    struct session *s = malloc(sizeof *s);
    int err = ENOMEM;
    if (s && set_timeouts(fd, srv->opt) < 0) {
        err = errno;
        free(s);
        s = NULL;
    }
    if (s) {
        *s = (struct session){.srv = srv, .fd = fd};
        pthread_mutex_lock(&tm.lock);
        s->next = tm.head.next;
        s->prev = &tm.head;
        tm.head.next->prev = s;
        tm.head.next = s;
        pthread_mutex_unlock(&tm.lock);
        atomic_fetch_add(&tm.live, 1);
        err = pthread_create(&(pthread_t){0}, attr, session_main, s);
        if (err == 0) return;
        atomic_fetch_sub(&tm.live, 1);
        s_close(s);
        free(s);
    } else {
        close(fd);
    }
    srv_add(&srv->stats->spawn_failed, 1);
    srv_conn_done(srv);
    srv_log_once(&logged_spawn, "cannot start a thread: %s; connection closed", strerror(err));
}

/* Wake every blocked session (reads see EOF, writes fail) and give them time to finish. */
static void drain(void)
{
    pthread_mutex_lock(&tm.lock);
    for (struct session *s = tm.head.next; s != &tm.head; s = s->next)
        shutdown(s->fd, SHUT_RDWR);
    pthread_mutex_unlock(&tm.lock);
    for (int ms = 0; atomic_load(&tm.live) > 0 && ms < DRAIN_MS; ms++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

struct thread_admit {
    struct srv_server *srv;
    const pthread_attr_t *attr;
};

static void admit(int fd, void *ctx)
{
    struct thread_admit *t = ctx;
    spawn(t->srv, t->attr, fd);
}

static int thread_run(struct srv_server *srv)
{
    struct srv_acceptor a;
    pthread_attr_t attr;
    if (srv_acceptor_init(&a, srv, srv->listen_fd[0]) < 0) {
        perror("echo-server: reserve fd");
        return -1;
    }
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (srv->opt->stack_size) pthread_attr_setstacksize(&attr, srv->opt->stack_size);
    /* Sessions block in recv/send and never call epoll_ctl: the count is an honest zero. */
    srv->stats->epoll_counted = true;
    if (srv->opt->read_timeout_ms || srv->opt->idle_timeout_ms)
        srv->stats->timers = "kernel (SO_RCVTIMEO, SO_SNDTIMEO)";
    struct pollfd p[2] = {{srv->listen_fd[0], POLLIN, 0}, {srv->stop_fd[0], POLLIN, 0}};
    int timeout = -1;
    srv_ready(srv);
    while (!srv_stopping(srv)) {
        /* During a back-off the listener is left out of the poll set (negative fd). */
        p[0].fd = timeout < 0 ? srv->listen_fd[0] : -1;
        int n = poll(p, 2, timeout);
        if (n < 0 && errno != EINTR) {
            perror("echo-server: poll");
            break;
        }
        timeout = n > 0 && p[0].revents ? srv_accept_burst(&a, ACCEPT_BURST, admit,
                                                           &(struct thread_admit){srv, &attr})
                                        : -1;
    }
    pthread_attr_destroy(&attr);
    srv_acceptor_fini(&a);
    drain();
    return 0;
}

static int thread_check(const struct srv_options *o, char *why, size_t len)
{
    if (o->stack_size && o->stack_size < MIN_STACK) {
        snprintf(why, len, "--stack-size must be at least %d bytes for --model thread", MIN_STACK);
        return -1;
    }
    return 0;
}

const struct srv_model srv_model_thread = {.name = "thread",
                                           .summary =
                                               "one thread per connection, blocking read and write",
                                           .concurrency = SRV_THREAD_PER_CONN,
                                           .takes_stack_size = true,
                                           .takes_timeouts = true,
                                           .check = thread_check,
                                           .run = thread_run};
