/* server_fork.c - one child process per connection runs the blocking echo session. */
#include "echo_session.h"
#include "server.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ACCEPT_BURST 64
#define TERM_MS      2000 /* how long shutdown waits after SIGTERM before SIGKILL */

/* The children alive now: shutdown terminates each of them (never the process group). */
struct kids {
    pid_t *pid;
    size_t n, cap;
};

static atomic_bool logged_fork;

/* Make room for one more pid before forking, so a child is never lost for want of memory. */
static int kids_reserve(struct kids *k)
{
    if (k->n < k->cap) return 0;
    size_t cap = k->cap ? 2 * k->cap : 64;
    pid_t *p = realloc(k->pid, cap * sizeof *p);
    if (!p) return -1;
    k->pid = p;
    k->cap = cap;
    return 0;
}

static void kids_remove(struct kids *k, pid_t pid)
{
    for (size_t i = 0; i < k->n; i++) {
        if (k->pid[i] == pid) {
            k->pid[i] = k->pid[--k->n];
            return;
        }
    }
}

/* Collect every child that ended; each was one admitted connection. */
static void reap(struct srv_server *srv, struct kids *k, int options)
{
    pid_t pid;
    while ((pid = waitpid(-1, NULL, options)) > 0) {
        kids_remove(k, pid);
        srv_conn_done(srv);
    }
}

/*
 * In the child: drop what belongs to the parent (listeners, stop fds, the signalfd, the
 * reserve fd), take the default signal dispositions back so SIGTERM from the parent ends
 * it, echo, and leave with _exit: no atexit handlers or stdio buffers of the parent.
 */
static void __attribute__((noreturn))
child(struct srv_server *srv, int keep, int sfd, struct srv_acceptor *a)
{
    for (int i = 0; i < srv->nlisten; i++) {
        close(srv->listen_fd[i]);
        close(srv->stop_fd[i]);
    }
    close(sfd);
    srv_acceptor_fini(a);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    char buf[SRV_ECHO_BUF];
    struct srv_io io = srv_fd_io(&keep);
    srv_echo_session(&io, buf, sizeof buf, &srv->stats->bytes);
    _exit(0);
}

static void spawn(struct srv_server *srv, struct kids *k, int fd, int sfd, struct srv_acceptor *a)
{
    pid_t pid = -1;
    int err = ENOMEM;
    if (kids_reserve(k) == 0) {
        pid = fork();
        err = errno;
    }
    if (pid == 0) child(srv, fd, sfd, a);
    close(fd);
    if (pid > 0) {
        k->pid[k->n++] = pid;
        return;
    }
    srv_add(&srv->stats->spawn_failed, 1);
    srv_conn_done(srv);
    srv_log_once(&logged_fork, "cannot fork: %s; connection closed", strerror(err));
}

struct fork_admit {
    struct srv_server *srv;
    struct kids *kids;
    int sfd;
    struct srv_acceptor *a;
};

static void admit(int fd, void *ctx)
{
    struct fork_admit *f = ctx;
    spawn(f->srv, f->kids, fd, f->sfd, f->a);
}

/* SIGTERM to every child, wait up to TERM_MS for them, then SIGKILL whoever is left. */
static void terminate_all(struct srv_server *srv, struct kids *k)
{
    for (size_t i = 0; i < k->n; i++)
        kill(k->pid[i], SIGTERM);
    for (int ms = 0; k->n > 0 && ms < TERM_MS; ms++) {
        reap(srv, k, WNOHANG);
        if (k->n > 0) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    for (size_t i = 0; i < k->n; i++)
        kill(k->pid[i], SIGKILL);
    reap(srv, k, 0);
}

static void drain_signalfd(int sfd)
{
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
    }
}

static int serve(struct srv_server *srv, struct srv_acceptor *a, struct kids *k, int sfd)
{
    struct pollfd p[3] = {
        {srv->listen_fd[0], POLLIN, 0}, {srv->stop_fd[0], POLLIN, 0}, {sfd, POLLIN, 0}};
    int timeout = -1;
    srv_ready(srv);
    while (!srv_stopping(srv)) {
        p[0].fd = timeout < 0 ? srv->listen_fd[0] : -1;
        int n = poll(p, 3, timeout);
        if (n < 0 && errno != EINTR) {
            perror("echo-server: poll");
            return -1;
        }
        if (n > 0 && p[2].revents) {
            drain_signalfd(sfd);
            reap(srv, k, WNOHANG);
        }
        timeout = n > 0 && p[0].revents ? srv_accept_burst(a, ACCEPT_BURST, admit,
                                                           &(struct fork_admit){srv, k, sfd, a})
                                        : -1;
    }
    return 0;
}

static int fork_run(struct srv_server *srv)
{
    struct srv_acceptor a;
    struct kids k = {0};
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD); /* blocked by the front end in every thread */
    int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0 || srv_acceptor_init(&a, srv, srv->listen_fd[0]) < 0) {
        perror("echo-server: fork model setup");
        return -1;
    }
    srv->stats->epoll_counted = true; /* poll(2) in the parent, blocking IO in children */
    srv->stats->children = true;
    int rc = serve(srv, &a, &k, sfd);
    terminate_all(srv, &k);
    srv_acceptor_fini(&a);
    close(sfd);
    free(k.pid);
    return rc;
}

const struct srv_model srv_model_fork = {
    .name = "fork",
    .summary = "one child process forked per connection, blocking read and write",
    .concurrency = SRV_PROCESS_PER_CONN,
    .run = fork_run};
