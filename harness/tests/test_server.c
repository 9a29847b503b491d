/* A small epoll echo server for the harness tests: echoes exactly, or injects one chosen fault. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * It speaks echo-server's command-line contract (prints "listening 127.0.0.1:PORT", prints one
 * JSON line of statistics on SIGTERM or SIGINT), so the sweep driver can also run against it
 * when echo-server is not built. Each fault happens once in the whole run, at stream offset --at
 * of the first connection that gets that far (for stall: once the server has echoed --at bytes
 * in total), so a test knows exactly what echo-load must find. With --times N it happens on the
 * first N connections that get that far, and with --times 0 on every one: a server that never
 * echoes right.
 */
enum fault { F_NONE, F_FLIP, F_DROP, F_EXTRA, F_SWAP, F_CLOSE, F_STALL };
static const char *const fault_names[] = {"none", "flip",  "drop", "extra",
                                          "swap", "close", "stall"};

#define BUF 65536

struct conn {
    bool open;
    uint64_t off;     /* bytes received on this connection */
    uint8_t *pending; /* echo not yet written (only after a short write) */
    size_t plen, pdone;
};

struct server {
    enum fault fault;
    uint64_t at;
    long stall_ms;
    bool fault_done;
    uint64_t times, applied; /* --times: connections to damage (0: all); how many were */
    int ep, lfd, sfd;
    struct conn *conns;
    size_t nconns;
    uint64_t accepted, bytes, live, max_live;
    uint8_t seen_peer[65536 / 8]; /* low 16 bits of each IPv4 peer address seen */
    uint64_t peers;
    uint64_t conn_limit; /* --conn-limit: connections served at once, 0 = no limit */
    bool accept_paused;  /* at the limit: the listener is not watched */
    const char *model;
};

static _Noreturn void die(const char *what)
{
    fprintf(stderr, "test-server: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void watch(struct server *s, int fd, uint32_t ev, int op)
{
    struct epoll_event e = {.events = ev, .data.fd = fd};
    if (epoll_ctl(s->ep, op, fd, &e) < 0) die("epoll_ctl");
}

static void drop_conn(struct server *s, int fd)
{
    struct conn *c = &s->conns[fd];
    free(c->pending);
    *c = (struct conn){0};
    close(fd);
    s->live--;
    if (s->accept_paused) {
        s->accept_paused = false;
        watch(s, s->lfd, EPOLLIN, EPOLL_CTL_MOD);
    }
}

static void note_peer(struct server *s, const struct sockaddr_in *a)
{
    uint32_t low = ntohl(a->sin_addr.s_addr) & 0xffff;
    if (!(s->seen_peer[low / 8] & (1u << (low % 8)))) {
        s->seen_peer[low / 8] |= (uint8_t)(1u << (low % 8));
        s->peers++;
    }
}

/* With --conn-limit N it serves N connections at once, as a pool of N blocking workers does:
 * the rest wait in the listen backlog until one of them closes. */
static void accept_all(struct server *s)
{
    for (;;) {
        if (s->conn_limit && s->live >= s->conn_limit) {
            s->accept_paused = true;
            watch(s, s->lfd, 0, EPOLL_CTL_MOD);
            return;
        }
        struct sockaddr_storage peer;
        socklen_t len = sizeof(peer);
        int fd = accept4(s->lfd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return; /* EAGAIN, or out of fds: the connection waits in the backlog */
        if ((size_t)fd >= s->nconns) {
            close(fd);
            continue;
        }
        if (peer.ss_family == AF_INET) note_peer(s, (struct sockaddr_in *)&peer);
        s->conns[fd] = (struct conn){.open = true};
        s->accepted++;
        if (++s->live > s->max_live) s->max_live = s->live;
        watch(s, fd, EPOLLIN, EPOLL_CTL_ADD);
    }
}

/* Applies the one fault to the chunk [c->off, c->off + *n); false when the connection closes. */
static bool inject(struct server *s, struct conn *c, uint8_t *buf, size_t *n, int fd)
{
    if (s->fault_done || s->fault == F_NONE) return true;
    if (s->fault == F_STALL) {
        if (s->bytes + *n >= s->at) {
            struct timespec ts = {s->stall_ms / 1000, (s->stall_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            s->fault_done = true;
        }
        return true;
    }
    if (s->at < c->off || s->at >= c->off + *n) return true;
    size_t i = (size_t)(s->at - c->off);
    if (s->fault == F_SWAP && (i + 1 >= *n || buf[i] == buf[i + 1]))
        return true; /* needs two different bytes in one chunk (swapping equal bytes changes
                        nothing); another connection will do */
    s->applied++;
    s->fault_done = s->times && s->applied >= s->times;
    switch (s->fault) {
    case F_FLIP:
        buf[i] ^= 0x5a;
        break;
    case F_DROP:
        memmove(buf + i, buf + i + 1, --*n - i);
        break;
    case F_EXTRA:
        memmove(buf + i + 1, buf + i, (*n)++ - i);
        buf[i] = (uint8_t)~buf[i + 1];
        break;
    case F_SWAP: {
        uint8_t t = buf[i];
        buf[i] = buf[i + 1];
        buf[i + 1] = t;
        break;
    }
    case F_CLOSE: {
        /* Echo what came before the fault offset, then hang up with the rest still owed. */
        ssize_t k = write(fd, buf, i);
        (void)k;
        drop_conn(s, fd);
        return false;
    }
    default:
        break;
    }
    return true;
}

static void flush_pending(struct server *s, int fd)
{
    struct conn *c = &s->conns[fd];
    while (c->pdone < c->plen) {
        ssize_t k = write(fd, c->pending + c->pdone, c->plen - c->pdone);
        if (k < 0 && errno == EAGAIN) return;
        if (k <= 0) {
            drop_conn(s, fd);
            return;
        }
        c->pdone += (size_t)k;
    }
    free(c->pending);
    c->pending = NULL;
    c->plen = c->pdone = 0;
    watch(s, fd, EPOLLIN, EPOLL_CTL_MOD);
}

static void echo_some(struct server *s, int fd)
{
    static uint8_t buf[BUF + 1];
    struct conn *c = &s->conns[fd];
    ssize_t k = read(fd, buf, BUF);
    if (k < 0 && errno == EAGAIN) return;
    if (k <= 0) {
        drop_conn(s, fd);
        return;
    }
    size_t n = (size_t)k;
    uint64_t got = n;
    if (!inject(s, c, buf, &n, fd)) return;
    c->off += got;
    s->bytes += n;
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EAGAIN) w = 0;
    if (w < 0) {
        drop_conn(s, fd);
        return;
    }
    if ((size_t)w < n) {
        /* Stop reading until the rest is out, so a slow reader only ever costs one chunk. */
        c->pending = malloc(n - (size_t)w);
        if (!c->pending) {
            drop_conn(s, fd);
            return;
        }
        memcpy(c->pending, buf + w, n - (size_t)w);
        c->plen = n - (size_t)w;
        watch(s, fd, EPOLLOUT, EPOLL_CTL_MOD);
    }
}

static long rss_max_kb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

static void print_stats(const struct server *s)
{
    printf("{\"model\":\"%s\",\"server\":\"harness-test-server\",\"fault\":\"%s\","
           "\"fault_applied\":%s,\"connections\":%llu,\"max_concurrent\":%llu,\"bytes\":%llu,"
           "\"peers\":%llu,\"rss_max_kb\":%ld}\n",
           s->model, fault_names[s->fault], s->fault_done || s->applied ? "true" : "false",
           (unsigned long long)s->accepted, (unsigned long long)s->max_live,
           (unsigned long long)s->bytes, (unsigned long long)s->peers, rss_max_kb());
    fflush(stdout);
}

static void serve(struct server *s)
{
    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(s->ep, evs, 256, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("epoll_wait");
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == s->sfd) return;
            if (fd == s->lfd)
                accept_all(s);
            else if (s->conns[fd].open && s->conns[fd].pending)
                flush_pending(s, fd);
            else if (s->conns[fd].open)
                echo_some(s, fd);
        }
    }
}

/* Loopback only: 127.0.0.0/8, or ::1 for the IPv6 test. */
static void listen_on(struct server *s, const char *bind_addr, int port)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    socklen_t len;
    if (inet_pton(AF_INET, bind_addr, &a4->sin_addr) == 1 &&
        (ntohl(a4->sin_addr.s_addr) >> 24) == 127) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        len = sizeof(*a4);
    } else if (inet_pton(AF_INET6, bind_addr, &a6->sin6_addr) == 1 &&
               IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        len = sizeof(*a6);
    } else {
        fprintf(stderr, "test-server: --bind must be a loopback address, got '%s'\n", bind_addr);
        exit(2);
    }
    s->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&ss, len) < 0 || listen(s->lfd, 4096) < 0)
        die("listen");
    getsockname(s->lfd, (struct sockaddr *)&ss, &len);
    printf("listening %s:%d\n", bind_addr,
           ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port));
    fflush(stdout);
}

static void setup(struct server *s)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    s->nconns = rl.rlim_cur > 65536 ? 65536 : rl.rlim_cur;
    s->conns = calloc(s->nconns, sizeof(*s->conns));
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    s->sfd = signalfd(-1, &set, SFD_CLOEXEC);
    s->ep = epoll_create1(EPOLL_CLOEXEC);
    if (!s->conns || s->sfd < 0 || s->ep < 0) die("setup");
}

static _Noreturn void usage_error(const char *arg)
{
    fprintf(stderr,
            "test-server: bad argument '%s' (valid: --model NAME --bind 127.x.y.z --port N "
            "--fault none|flip|drop|extra|swap|close|stall --at BYTES --times N --stall-ms MS "
            "--conn-limit N)\n",
            arg);
    exit(2);
}

int main(int argc, char **argv)
{
    static struct server s = {.at = 5000, .times = 1, .stall_ms = 1000, .model = "test"};
    const char *bind_addr = "127.0.0.1";
    int port = 0;
    /* Standing in for echo-server towards the sweep, it declares one model of its own. */
    if (argc == 3 && strcmp(argv[1], "--list") == 0 && strcmp(argv[2], "--json") == 0) {
        printf("{\"layer\": \"servers\", \"members\": [{\"name\": \"%s\", \"props\": "
               "{\"concurrency\": \"event-loop\"}}]}\n",
               s.model);
        return 0;
    }
    /* Every option takes a value: step over the pair. */
    for (int i = 1; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage_error(argv[i]);
        if (strcmp(argv[i], "--model") == 0)
            s.model = v;
        else if (strcmp(argv[i], "--bind") == 0)
            bind_addr = v;
        else if (strcmp(argv[i], "--port") == 0)
            port = atoi(v);
        else if (strcmp(argv[i], "--at") == 0)
            s.at = strtoull(v, NULL, 10);
        else if (strcmp(argv[i], "--stall-ms") == 0)
            s.stall_ms = atol(v);
        else if (strcmp(argv[i], "--times") == 0)
            s.times = strtoull(v, NULL, 10);
        else if (strcmp(argv[i], "--conn-limit") == 0)
            s.conn_limit = strtoull(v, NULL, 10);
        else if (strcmp(argv[i], "--fault") == 0) {
            unsigned f = 0;
            while (f < sizeof(fault_names) / sizeof(*fault_names) && strcmp(fault_names[f], v))
                f++;
            if (f == sizeof(fault_names) / sizeof(*fault_names)) usage_error(v);
            s.fault = (enum fault)f;
        } else
            usage_error(argv[i]);
    }
    setup(&s);
    listen_on(&s, bind_addr, port);
    watch(&s, s.lfd, EPOLLIN, EPOLL_CTL_ADD);
    watch(&s, s.sfd, EPOLLIN, EPOLL_CTL_ADD);
    serve(&s);
    print_stats(&s);
    return 0;
}
