/* server_core.c - the model table, stopping, the run of one event loop per listener, listeners. */
#include "server.h"
#include "srv_registry.h" /* SRV_MODELS(X): generated from servers/CMakeLists.txt */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define SRV__DECLARE(id) extern const struct srv_model srv_model_##id;
SRV_MODELS(SRV__DECLARE)
#undef SRV__DECLARE

/* A model this build left out is still known by name, and refused with the reason. */
#define SRV__LEFT_OUT(id, name_, why)                                                              \
    static const struct srv_model srv_model_##id = {                                               \
        .name = name_, .missing = "not compiled in (" why " and reconfigure)"};
SRV_MODELS_LEFT_OUT(SRV__LEFT_OUT)
#undef SRV__LEFT_OUT

const struct srv_model *const srv_models[] = {
#define SRV__ENTRY(id) &srv_model_##id,
    SRV_MODELS(SRV__ENTRY)
#undef SRV__ENTRY
#define SRV__ENTRY(id, name, why) &srv_model_##id,
        SRV_MODELS_LEFT_OUT(SRV__ENTRY)
#undef SRV__ENTRY
            NULL};

const char *srv_concurrency_name(enum srv_concurrency c)
{
    switch (c) {
    case SRV_THREAD_PER_CONN:
        return "thread-per-connection";
    case SRV_PROCESS_PER_CONN:
        return "process-per-connection";
    case SRV_PROCESS_POOL:
        return "process-pool";
    case SRV_THREAD_POOL:
        return "thread-pool";
    case SRV_FIBER_PER_CONN:
        return "fiber-per-connection";
    case SRV_EVENT_LOOP:
        return "event-loop";
    }
    return "?";
}

const struct srv_model *srv_model_find(const char *name)
{
    for (int i = 0; srv_models[i]; i++)
        if (strcmp(srv_models[i]->name, name) == 0) return srv_models[i];
    return NULL;
}

void srv_stop(struct srv_server *srv)
{
    if (atomic_exchange(&srv->stopping, true)) return;
    /* An eventfd stays readable until read, so every loop sees the stop, now or later. */
    for (int i = 0; i < srv->nlisten; i++) {
        uint64_t one = 1;
        if (srv->stop_fd[i] >= 0 && write(srv->stop_fd[i], &one, sizeof one) < 0)
            perror("echo-server: stop eventfd");
    }
}

void srv_ready(struct srv_server *srv)
{
    if (atomic_exchange(&srv->ready, true)) return;
    if (srv->ready_fd >= 0) {
        /* A worker process: the parent prints the line once every worker has said so. */
        if (write(srv->ready_fd, "r", 1) != 1) perror("echo-server: ready pipe");
        close(srv->ready_fd);
        srv->ready_fd = -1;
        return;
    }
    printf("listening %s:%d\n", srv->opt->bind, srv->port);
    fflush(stdout);
}

struct loop_thread {
    const struct srv_loop_ops *ops;
    struct srv_server *srv;
    void *loop;
    pthread_t th;
};

static void *loop_thread_main(void *arg)
{
    struct loop_thread *t = arg;
    t->ops->serve(t->loop);
    srv_stop(t->srv); /* a loop that ended on its own takes the others down */
    return NULL;
}

int srv_run_loops_in(struct srv_server *srv, void *loops, const struct srv_loop_ops *ops)
{
    int n = srv->nlisten, started = 1, rc = 0;
    struct loop_thread t[SRV_MAX_THREADS];
    bool first_ready = false;
    for (int i = 0; i < n; i++)
        t[i] = (struct loop_thread){
            .ops = ops, .srv = srv, .loop = (char *)loops + (size_t)i * ops->size};
    for (int i = 0; i < n && rc == 0; i++) {
        rc = ops->init(t[i].loop, srv, i);
        if (i == 0) first_ready = rc == 0;
    }
    while (rc == 0 && started < n) {
        if (pthread_create(&t[started].th, NULL, loop_thread_main, &t[started]) != 0)
            rc = -1;
        else
            started++;
    }
    if (rc < 0) {
        fprintf(stderr, "echo-server: cannot set up the %s loops\n", ops->what);
        srv_stop(srv); /* loop 0 and the started loops see their stop fds at once */
    } else {
        srv_ready(srv);
    }
    if (first_ready) loop_thread_main(&t[0]);
    for (int i = 1; i < started; i++)
        pthread_join(t[i].th, NULL);
    for (int i = 0; i < n; i++)
        ops->fini(t[i].loop);
    return rc;
}

int srv_run_loops(struct srv_server *srv, const struct srv_loop_ops *ops)
{
    void *loops = calloc((size_t)srv->nlisten, ops->size);
    if (!loops) return -1;
    int rc = srv_run_loops_in(srv, loops, ops);
    free(loops);
    return rc;
}

/* ---- front end only ------------------------------------------------------------------ */

static atomic_bool got_signal;
static pthread_t signal_th;
static sem_t signal_th_running;

/*
 * SIGINT and SIGTERM are blocked in every thread (the front end blocks them before any
 * thread exists) and taken here with sigwait, so stopping never runs inside a signal
 * handler and no model has to care about EINTR from them.
 */
static void *signal_thread(void *arg)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int sig = 0;
    sem_post(&signal_th_running);
    sigwait(&set, &sig);
    atomic_store(&got_signal, true);
    srv_stop(arg);
    return NULL;
}

/*
 * Returns once the thread runs. Worker processes are forked right after this, and a fork
 * while a thread is still starting can copy a lock it holds (a sanitizer allocator's, seen
 * under ASan) into the child, locked for ever.
 */
int srv__signals_start(struct srv_server *srv)
{
    if (sem_init(&signal_th_running, 0, 0) != 0) return -1;
    if (pthread_create(&signal_th, NULL, signal_thread, srv) != 0) return -1;
    while (sem_wait(&signal_th_running) != 0) {
    }
    return 0;
}

void srv__signals_end(struct srv_server *srv)
{
    srv_stop(srv);
    if (!atomic_load(&got_signal))
        pthread_kill(signal_th, SIGTERM); /* blocked there, so it just ends the sigwait */
    pthread_join(signal_th, NULL);
}

static int open_one(const struct sockaddr_in *sa, bool reuseport, char *why, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0) {
        snprintf(why, len, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) {
        snprintf(why, len, "SO_REUSEPORT: %s", strerror(errno));
    } else if (bind(fd, (const struct sockaddr *)sa, sizeof *sa) < 0) {
        snprintf(why, len, "bind %s:%d: %s", inet_ntoa(sa->sin_addr), ntohs(sa->sin_port),
                 strerror(errno));
    } else if (listen(fd, SOMAXCONN) < 0) {
        snprintf(why, len, "listen: %s", strerror(errno));
    } else {
        return fd;
    }
    close(fd);
    return -1;
}

/*
 * A SO_REUSEPORT group joins any other group on the port: a second server started on a port
 * that is already served would quietly take half of its connections. A socket without
 * SO_REUSEPORT cannot bind beside a listening one, so a probe tells, as a single listener's
 * own bind does.
 */
static bool port_taken(const struct sockaddr_in *sa, char *why, size_t len)
{
    int fd = open_one(sa, false, why, len);
    if (fd >= 0) {
        close(fd);
        return false;
    }
    return strstr(why, strerror(EADDRINUSE)) != NULL;
}

/*
 * Open n listeners on opt->bind:opt->port (n > 1: SO_REUSEPORT, the kernel spreads new
 * connections over them) and one stop eventfd per listener. Returns the port, or -1.
 */
int srv__open_listeners(struct srv_server *srv, int n, char *why, size_t len)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(srv->opt->port)};
    inet_pton(AF_INET, srv->opt->bind, &sa.sin_addr); /* validated by the option parser */
    if (n > 1 && srv->opt->port != 0 && port_taken(&sa, why, len)) return -1;
    for (int i = 0; i < SRV_MAX_THREADS; i++)
        srv->listen_fd[i] = srv->stop_fd[i] = -1;
    for (int i = 0; i < n; i++) {
        srv->listen_fd[i] = open_one(&sa, n > 1, why, len);
        srv->stop_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        srv->nlisten = i + 1;
        if (srv->listen_fd[i] < 0) return -1;
        if (srv->stop_fd[i] < 0) {
            snprintf(why, len, "eventfd: %s", strerror(errno));
            return -1;
        }
        socklen_t sl = sizeof sa;
        if (i == 0 && getsockname(srv->listen_fd[0], (struct sockaddr *)&sa, &sl) < 0) {
            snprintf(why, len, "getsockname: %s", strerror(errno));
            return -1;
        }
    }
    return ntohs(sa.sin_port);
}

void srv__close_listeners(struct srv_server *srv)
{
    for (int i = 0; i < srv->nlisten; i++) {
        if (srv->listen_fd[i] >= 0) close(srv->listen_fd[i]);
        if (srv->stop_fd[i] >= 0) close(srv->stop_fd[i]);
        srv->listen_fd[i] = srv->stop_fd[i] = -1;
    }
}
