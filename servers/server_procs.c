/* server_procs.c - worker processes on one port: fork, wait until ready, restart, stop. */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READY_MS 60000 /* how long every worker together may take to set up */
#define TERM_MS  5000  /* grace after SIGTERM before SIGKILL at shutdown */

/*
 * The parent owns every listener and never accepts: it keeps them open so a worker started
 * again gets the same ones (and SO_REUSEPORT's group never changes), reaps workers through a
 * signalfd, and turns SIGINT/SIGTERM into SIGTERM for each worker. A worker is an ordinary
 * single-process server: its own stop eventfds, its own signal thread, the model's run().
 *
 * Shutdown is a state the parent knows before it restarts anyone. A signal to the process
 * group (Ctrl-C, timeout(1), kill -TERM -PGID) reaches every worker too, and a worker may be
 * gone before the parent's signal thread would have marked the server as stopping: that is
 * how workers used to be started again during shutdown. So the parent takes SIGINT and
 * SIGTERM through a signalfd of its own (no signal thread) and reads it after every reaped
 * worker, before deciding that the worker ended early. The kernel queues a group signal on
 * every member before any of them can finish exiting (kill holds tasklist_lock for reading
 * over the whole group, exit_notify needs it for writing), so a worker reaped because of a
 * group signal always finds the parent's own signal already queued.
 */
struct procs {
    struct srv_server *srv;
    const struct srv_model *model;
    pid_t *pid;
    int n, per; /* workers, and listeners per worker (shared mode: the one at index 0) */
    int sfd, tfd, ready_rd, ready_wr; /* signalfds of SIGCHLD and of SIGINT/SIGTERM */
    pid_t parent_pid;
};

static atomic_bool logged_exit, logged_fork;

static void __attribute__((noreturn)) worker_main(struct procs *p, int idx)
{
    struct srv_server *parent = p->srv;
    /* Never outlive the parent (a test that kills it, a crash): no orphaned workers. */
    prctl(PR_SET_PDEATHSIG, p->model->term_kills_worker ? SIGKILL : SIGTERM);
    if (getppid() != p->parent_pid) _exit(1);
    bool shared = p->model->procs_kind == SRV_PROCS_SHARED;
    int first = shared ? 0 : idx * p->per;
    struct srv_server w = {.opt = parent->opt,
                           .stats = parent->stats,
                           .port = parent->port,
                           .nlisten = p->per,
                           .ready_fd = p->ready_wr};
    close(p->sfd);
    close(p->tfd);
    close(p->ready_rd);
    for (int i = 0; i < SRV_MAX_THREADS; i++)
        w.listen_fd[i] = w.stop_fd[i] = -1;
    for (int i = 0; i < parent->nlisten; i++) {
        close(parent->stop_fd[i]);
        if (i >= first && i < first + p->per)
            w.listen_fd[i - first] = parent->listen_fd[i];
        else
            close(parent->listen_fd[i]);
    }
    for (int i = 0; i < p->per; i++) {
        w.stop_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w.stop_fd[i] < 0) _exit(1);
    }
    if (p->model->term_kills_worker) {
        /* A SIGTERM that came before this point is pending and ends the worker here. */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGINT);
        sigaddset(&term, SIGTERM);
        sigprocmask(SIG_UNBLOCK, &term, NULL);
        _exit(p->model->run(&w) == 0 ? 0 : 1);
    }
    if (srv__signals_start(&w) != 0) _exit(1);
    int rc = p->model->run(&w);
    srv__signals_end(&w);
    _exit(rc == 0 ? 0 : 1);
}

static int start_worker(struct procs *p, int idx)
{
    pid_t pid = fork();
    if (pid == 0) worker_main(p, idx);
    if (pid < 0) {
        srv_log_once(&logged_fork, "cannot fork a worker process: %s", strerror(errno));
        return -1;
    }
    p->pid[idx] = pid;
    return 0;
}

static int worker_index(const struct procs *p, pid_t pid)
{
    for (int i = 0; i < p->n; i++)
        if (p->pid[i] == pid) return i;
    return -1;
}

static void drain(int fd)
{
    char buf[512];
    while (read(fd, buf, sizeof buf) > 0) {
    }
}

/* SIGINT or SIGTERM queued for the parent (or its group): the server is stopping now. */
static void take_stop_signal(struct procs *p)
{
    struct signalfd_siginfo si;
    if (read(p->tfd, &si, sizeof si) == (ssize_t)sizeof si) {
        srv_stop(p->srv);
        drain(p->tfd);
    }
}

/* Reap every worker that ended; returns how many ended. Their slots are set to 0. */
static int reap(struct procs *p, int options)
{
    int ended = 0, st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, options)) > 0) {
        int i = worker_index(p, pid);
        if (i < 0) continue;
        p->pid[i] = 0;
        ended++;
        take_stop_signal(p); /* a group signal is queued here before its workers are reaped */
        if (!srv_stopping(p->srv))
            srv_log_once(&logged_exit,
                         "worker process %d ended early (status %#x); starting "
                         "another",
                         (int)pid, st);
    }
    return ended;
}

/* Wait until every worker reported ready; false when one ended first or the time ran out. */
static bool wait_ready(struct procs *p)
{
    int got = 0;
    long long waited = 0;
    struct pollfd f[3] = {{p->ready_rd, POLLIN, 0}, {p->sfd, POLLIN, 0}, {p->tfd, POLLIN, 0}};
    while (got < p->n && !srv_stopping(p->srv) && waited < READY_MS) {
        int k = poll(f, 3, 100);
        waited += k == 0 ? 100 : 0;
        if (k < 0 && errno != EINTR) return false;
        if (k <= 0) continue;
        if (f[2].revents) take_stop_signal(p);
        if (f[0].revents) {
            char buf[512];
            ssize_t r = read(p->ready_rd, buf, sizeof buf);
            got += r > 0 ? (int)r : 0;
        }
        if (f[1].revents) {
            drain(p->sfd);
            if (reap(p, WNOHANG) > 0) return false; /* a worker failed to set up */
        }
    }
    return got == p->n;
}

/* Serve until stopping: reap and start again any worker that ends. */
static void supervise(struct procs *p)
{
    struct pollfd f[3] = {{p->ready_rd, POLLIN, 0}, {p->sfd, POLLIN, 0}, {p->tfd, POLLIN, 0}};
    while (!srv_stopping(p->srv)) {
        int k = poll(f, 3, SRV_BACKOFF_MS);
        if (k < 0 && errno != EINTR) {
            perror("echo-server: poll");
            return;
        }
        if (k > 0 && f[2].revents) take_stop_signal(p);
        if (k > 0 && f[0].revents) drain(p->ready_rd); /* restarted workers report too */
        if (k > 0 && f[1].revents) {
            drain(p->sfd);
            reap(p, WNOHANG);
        }
        /* A failed fork is tried again after the poll timeout, not in a tight loop. */
        for (int i = 0; i < p->n && !srv_stopping(p->srv); i++)
            if (p->pid[i] == 0 && start_worker(p, i) == 0) srv_add(&p->srv->stats->respawned, 1);
    }
}

static int alive(const struct procs *p)
{
    int n = 0;
    for (int i = 0; i < p->n; i++)
        n += p->pid[i] > 0;
    return n;
}

static void terminate_all(struct procs *p)
{
    for (int i = 0; i < p->n; i++)
        if (p->pid[i] > 0) kill(p->pid[i], SIGTERM);
    for (int ms = 0; alive(p) > 0 && ms < TERM_MS; ms += 2) {
        reap(p, WNOHANG);
        if (alive(p) > 0) nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    for (int i = 0; i < p->n; i++)
        if (p->pid[i] > 0) kill(p->pid[i], SIGKILL);
    while (alive(p) > 0 && reap(p, 0) > 0) {
    }
}

int srv_run_procs(struct srv_server *srv, const struct srv_model *model)
{
    struct procs p = {.srv = srv,
                      .model = model,
                      .n = srv->opt->procs,
                      .sfd = -1,
                      .tfd = -1,
                      .parent_pid = getpid()};
    p.per = model->procs_kind == SRV_PROCS_SHARED ? 1 : srv->opt->threads;
    p.pid = calloc((size_t)p.n, sizeof *p.pid);
    int ready[2] = {-1, -1};
    sigset_t chld, term;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD); /* all three blocked by the front end in every thread */
    sigemptyset(&term);
    sigaddset(&term, SIGINT);
    sigaddset(&term, SIGTERM);
    if (p.pid && pipe2(ready, O_CLOEXEC | O_NONBLOCK) == 0) {
        p.sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
        p.tfd = signalfd(-1, &term, SFD_NONBLOCK | SFD_CLOEXEC);
    }
    if (p.sfd < 0 || p.tfd < 0) {
        perror("echo-server: worker processes");
        if (p.sfd >= 0) close(p.sfd);
        free(p.pid);
        return -1;
    }
    p.ready_rd = ready[0];
    p.ready_wr = ready[1];
    srv->stats->children = true;
    int rc = 0;
    for (int i = 0; i < p.n && rc == 0; i++)
        rc = start_worker(&p, i);
    if (rc == 0 && wait_ready(&p)) {
        srv_ready(srv);
        supervise(&p);
    } else if (!srv_stopping(srv)) {
        fprintf(stderr, "echo-server: %d worker processes did not all start\n", p.n);
        rc = -1;
    }
    terminate_all(&p);
    close(p.sfd);
    close(p.tfd);
    close(ready[0]);
    close(ready[1]);
    free(p.pid);
    return rc;
}
