/* test-hook.c - the hooked libc calls: blocking code in fibers must not block the other fibers. */
#define _GNU_SOURCE
#include "asserts.h"
#include "test-hook-cases.h"
#include "hook.h"
#include "io.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: test-hook CASE ENGINE. One CTest process per case and engine
 * (engines/hook/<case>/<engine>). The fibers under test call plain libc functions (recv,
 * connect, usleep, poll, ...) on blocking fds; a ticker fiber counts 1 ms sleeps meanwhile,
 * so "the other fibers kept running" is a number. Loopback only, every wait bounded.
 */

#define MS ((int64_t)1000000)

static const char *engine_name;
static fb_io *io;
static fb_runtime *rt;
static int ticks; /* fibers of one thread only: plain variables */
static bool stop_ticker;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The real flags of the file, past the fcntl hook. */
static int kernel_flags(int fd)
{
    return (int)syscall(SYS_fcntl, fd, F_GETFL);
}

static void start(void)
{
    const sw_backend *b = sw_backend_find("asm");
    if (!b) b = sw_backend_find("ucontext");
    io = fb_io_new(engine_name);
    ASSERT_TRUE(io != NULL);
    fb_config cfg = {.backend = b, .policy = FB_RING, .poller = fb_io_poller(io)};
    rt = fb_runtime_new(&cfg);
    ASSERT_TRUE(rt != NULL);
    ASSERT_EQ(fb_hook_enable(), 0);
    ticks = 0;
    stop_ticker = false;
}

static void run_and_finish(void)
{
    ASSERT_EQ(fb_run(rt), 0);
    fb_runtime_free(rt);
    fb_io_free(io);
    fb_hook_disable();
}

/* Counts 1 ms sleeps (hooked usleep) until told to stop. */
static void ticker(void *arg)
{
    (void)arg;
    while (!stop_ticker) {
        ASSERT_EQ(usleep(1000), 0);
        ticks++;
        fb_yield(); /* where usleep is libc's, the others still get their turn */
    }
}

static int listener(struct sockaddr_in *addr, bool nonblock)
{
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
    ASSERT_GE(l, 0);
    *addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof *addr;
    ASSERT_EQ(bind(l, (struct sockaddr *)addr, len), 0);
    ASSERT_EQ(listen(l, 64), 0);
    ASSERT_EQ(getsockname(l, (struct sockaddr *)addr, &len), 0);
    return l;
}

/* ---- nonblocking: blocking connect + recv and getaddrinfo in fibers ----------------------- */

#define HELPERS  4
#define DELAY_MS 150

static struct sockaddr_in srv_addr;
static int helpers_done;
static int64_t helper_wait_ns[HELPERS];
static int helper_ticks[HELPERS]; /* ticks of the ticker fiber during each helper's recv */

/* A slow back end: each request gets its 8-byte answer DELAY_MS after it arrived, so every
 * helper's recv waits at least that long however the machine schedules the fibers. */
static void *slow_reply(void *arg)
{
    int c = (int)(intptr_t)arg;
    char req[2];
    ASSERT_EQ(recv(c, req, 2, MSG_WAITALL), 2); /* a plain thread: libc's calls */
    usleep(DELAY_MS * 1000);
    char msg[16];
    snprintf(msg, sizeof msg, "reply%03d", c % 1000);
    ASSERT_EQ(send(c, msg, 8, MSG_NOSIGNAL), 8);
    close(c);
    return NULL;
}

static void *slow_server(void *arg)
{
    int l = (int)(intptr_t)arg;
    for (int i = 0; i < HELPERS; i++) {
        int c = accept(l, NULL, NULL);
        ASSERT_GE(c, 0);
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, slow_reply, (void *)(intptr_t)c), 0);
        pthread_detach(th);
    }
    close(l);
    return NULL;
}

static void helper(void *arg)
{
    int i = (int)(intptr_t)arg;
    int s = socket(AF_INET, SOCK_STREAM, 0); /* blocking, as a client library would make it */
    ASSERT_GE(s, 0);
    ASSERT_EQ(connect(s, (struct sockaddr *)&srv_addr, sizeof srv_addr), 0);
    ASSERT_EQ(fcntl(s, F_GETFL) & O_NONBLOCK, 0); /* the caller still sees a blocking socket */
    char buf[9] = {0};
    int64_t t0 = now_ns(); /* before the request: the answer comes >= DELAY_MS after it */
    int ticks0 = ticks;
    ASSERT_EQ(send(s, "go", 2, 0), 2);
    ASSERT_EQ(recv(s, buf, 8, MSG_WAITALL), 8);
    helper_wait_ns[i] = now_ns() - t0;
    helper_ticks[i] = ticks - ticks0;
    ASSERT_EQ(strncmp(buf, "reply", 5), 0);
    ASSERT_EQ(close(s), 0);
    if (++helpers_done == HELPERS) stop_ticker = true;
}

static void resolver(void *arg)
{
    (void)arg;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    ASSERT_EQ(getaddrinfo("localhost", "7", &hints, &res), 0);
    ASSERT_EQ(((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    freeaddrinfo(res);
}

static void t_nonblocking(void)
{
    int l = listener(&srv_addr, false);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, slow_server, (void *)(intptr_t)l), 0);
    start();
    fb_spawn(rt, ticker, NULL);
    for (intptr_t i = 0; i < HELPERS; i++)
        fb_spawn(rt, helper, (void *)i);
    fb_spawn(rt, resolver, NULL);
    int64_t t0 = now_ns();
    fb_hook_stats st;
    ASSERT_EQ(fb_run(rt), 0);
    fb_hook_get_stats(&st);
    int64_t elapsed = now_ns() - t0;
    fb_runtime_free(rt);
    fb_io_free(io);
    fb_hook_disable();
    ASSERT_EQ(pthread_join(th, NULL), 0);
    ASSERT_EQ(helpers_done, HELPERS);
    printf("%d blocking recv of %d ms each: %.0f ms in all; the ticker ran %d times in all, "
           "%d %d %d %d times during each recv; %llu hooked calls, %llu waits\n",
           HELPERS, DELAY_MS, (double)elapsed / 1e6, ticks, helper_ticks[0], helper_ticks[1],
           helper_ticks[2], helper_ticks[3], (unsigned long long)st.calls,
           (unsigned long long)st.waits);
    /* Each recv really waited, and the ticker kept running through every one of those waits
     * (about one tick per ms on a quiet machine; a recv that blocks the thread lets none).
     * Only lower bounds: a loaded machine makes everything later, never earlier. */
    for (int i = 0; i < HELPERS; i++) {
        ASSERT_GE(helper_wait_ns[i], (DELAY_MS - 1) * MS);
        ASSERT_GE(helper_ticks[i], 2);
    }
    ASSERT_GE(st.waits, HELPERS);
}

/* ---- caller_nonblock: O_NONBLOCK and MSG_DONTWAIT set by the caller give EAGAIN ----------- */

static int sp[2], sq[2];

static void late_sender(void *arg)
{
    int fd = (int)(intptr_t)arg;
    usleep(20 * 1000);
    ASSERT_EQ(write(fd, "x", 1), 1);
}

static void nb_main(void *arg)
{
    (void)arg;
    char c;
    fb_hook_stats before, after;
    /* Non-blocking before the first hooked call: EAGAIN at once, no wait. */
    ASSERT_EQ(fcntl(sp[0], F_SETFL, fcntl(sp[0], F_GETFL) | O_NONBLOCK), 0);
    fb_hook_get_stats(&before);
    int64_t t0 = now_ns();
    errno = 0;
    ASSERT_EQ(recv(sp[0], &c, 1, 0), -1);
    ASSERT_EQ(errno, EAGAIN);
    ASSERT_EQ(read(sp[0], &c, 1), -1);
    ASSERT_EQ(errno, EAGAIN);
    fb_hook_get_stats(&after);
    ASSERT_EQ(after.waits, before.waits); /* nothing ever arrives: a wait would never end */

    /* A blocking fd: the hooks set O_NONBLOCK underneath, the caller does not see it. */
    ASSERT_EQ(write(sq[1], "a", 1), 1);
    ASSERT_EQ(recv(sq[0], &c, 1, 0), 1);
    ASSERT_TRUE(kernel_flags(sq[0]) & O_NONBLOCK);
    ASSERT_EQ(fcntl(sq[0], F_GETFL) & O_NONBLOCK, 0);
    errno = 0;
    ASSERT_EQ(recv(sq[0], &c, 1, MSG_DONTWAIT), -1); /* per call: EAGAIN as well */
    ASSERT_EQ(errno, EAGAIN);

    /* The caller turns O_NONBLOCK on after the first use, then off again. */
    int fl = fcntl(sq[0], F_GETFL);
    ASSERT_EQ(fcntl(sq[0], F_SETFL, fl | O_NONBLOCK), 0);
    ASSERT_TRUE(fcntl(sq[0], F_GETFL) & O_NONBLOCK);
    errno = 0;
    ASSERT_EQ(read(sq[0], &c, 1), -1);
    ASSERT_EQ(errno, EAGAIN);
    ASSERT_EQ(fcntl(sq[0], F_SETFL, fl), 0);
    ASSERT_TRUE(kernel_flags(sq[0]) & O_NONBLOCK); /* still non-blocking underneath */
    fb_spawn(rt, late_sender, (void *)(intptr_t)sq[1]);
    fb_hook_get_stats(&before);
    t0 = now_ns();
    ASSERT_EQ(read(sq[0], &c, 1), 1); /* blocking again for the caller: waits for the sender */
    ASSERT_GE(now_ns() - t0, 15 * MS);
    fb_hook_get_stats(&after);
    ASSERT_GE(after.waits, before.waits + 1);
    stop_ticker = true;
}

static void t_caller_nonblock(void)
{
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sq), 0);
    start();
    fb_spawn(rt, ticker, NULL);
    fb_spawn(rt, nb_main, NULL);
    run_and_finish();
    ASSERT_GE(ticks, 1); /* it ran during the 20 ms wait */
}

/* ---- timeouts: SO_RCVTIMEO and SO_SNDTIMEO -------------------------------------------------- */

static void set_timeout(int fd, int opt, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    ASSERT_EQ(setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv), 0);
}

static void expect_eagain_after(ssize_t rc, int64_t t0, int ms)
{
    int64_t waited = now_ns() - t0;
    ASSERT_EQ(rc, -1);
    ASSERT_EQ(errno, EAGAIN);
    ASSERT_GE(waited, ms * MS);
    ASSERT_LE(waited, (ms + 2000) * MS); /* the timeout ended it (bound loose: shared CPUs) */
}

static void timeouts_main(void *arg)
{
    (void)arg;
    char c;
    /* Set before the first hooked call (read on first use) ... */
    set_timeout(sp[0], SO_RCVTIMEO, 40);
    int64_t t0 = now_ns();
    int before = ticks;
    expect_eagain_after(recv(sp[0], &c, 1, 0), t0, 40);
    ASSERT_GE(ticks - before, 1); /* the ticker ran while we waited */
    t0 = now_ns();
    expect_eagain_after(read(sp[0], &c, 1), t0, 40);
    /* ... and after it (the setsockopt hook updates the record). */
    ASSERT_EQ(write(sq[1], "a", 1), 1);
    ASSERT_EQ(read(sq[0], &c, 1), 1);
    set_timeout(sq[0], SO_RCVTIMEO, 30);
    t0 = now_ns();
    expect_eagain_after(read(sq[0], &c, 1), t0, 30);

    /* SO_SNDTIMEO: nobody reads, so a large send stops after the timeout with what it
     * wrote, and the next one writes nothing and fails. */
    set_timeout(sp[1], SO_SNDTIMEO, 30);
    size_t big = 8 << 20;
    char *buf = calloc(1, big);
    ASSERT_TRUE(buf != NULL);
    t0 = now_ns();
    ssize_t n = send(sp[1], buf, big, MSG_NOSIGNAL);
    ASSERT_GE(n, 1);
    ASSERT_LE(n, (ssize_t)big - 1);
    ASSERT_GE(now_ns() - t0, 30 * MS);
    t0 = now_ns();
    expect_eagain_after(write(sp[1], buf, big), t0, 30);
    free(buf);
    stop_ticker = true;
}

static void t_timeouts(void)
{
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sq), 0);
    start();
    fb_spawn(rt, ticker, NULL);
    fb_spawn(rt, timeouts_main, NULL);
    run_and_finish();
}

/* ---- write_all: blocking write and writev write every byte ----------------------------------- */

#define WBIG (4 << 20)

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131 + (i >> 13));
}

static void big_writer(void *arg)
{
    (void)arg;
    unsigned char *buf = malloc(WBIG);
    ASSERT_TRUE(buf != NULL);
    for (size_t i = 0; i < WBIG; i++)
        buf[i] = pattern(i);
    ASSERT_EQ(write(sq[0], buf, WBIG / 2), WBIG / 2);
    /* The second half as a vector with an empty element and uneven pieces. */
    struct iovec v[4] = {{buf + WBIG / 2, 1000},
                         {buf, 0},
                         {buf + WBIG / 2 + 1000, 700000},
                         {buf + WBIG / 2 + 701000, WBIG / 2 - 701000}};
    ASSERT_EQ(writev(sq[0], v, 4), WBIG / 2);
    free(buf);
    ASSERT_EQ(shutdown(sq[0], SHUT_WR), 0);
}

static void slow_reader(void *arg)
{
    (void)arg;
    static unsigned char chunk[7000];
    size_t got = 0;
    for (;;) {
        ssize_t n = fb_read(sq[1], chunk, sizeof chunk); /* direct fiber IO on the other end */
        ASSERT_GE(n, 0);
        if (n == 0) break;
        for (ssize_t i = 0; i < n; i++)
            ASSERT_EQ(chunk[i], pattern(got + (size_t)i));
        got += (size_t)n;
        if (got % 5 == 0) fb_yield();
    }
    ASSERT_EQ(got, WBIG);
    stop_ticker = true;
}

static void t_write_all(void)
{
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sq), 0);
    start();
    fb_spawn(rt, ticker, NULL);
    fb_spawn(rt, big_writer, NULL);
    fb_spawn(rt, slow_reader, NULL);
    run_and_finish();
}

/* ---- poll ---------------------------------------------------------------------------------- */

static int pa[2], pb[2];

static void poll_writer(void *arg)
{
    (void)arg;
    usleep(20 * 1000);
    ASSERT_EQ(write(pa[1], "1", 1), 1);
    usleep(20 * 1000);
    ASSERT_EQ(write(pb[1], "2", 1), 1);
}

static void poll_main(void *arg)
{
    (void)arg;
    int before = ticks;
    int64_t t0 = now_ns();
    ASSERT_EQ(poll(NULL, 0, 30), 0); /* the portable sleep */
    ASSERT_GE(now_ns() - t0, 30 * MS);
    ASSERT_GE(ticks - before, 1);
    fb_spawn(rt, poll_writer, NULL);
    struct pollfd one = {.fd = pa[0], .events = POLLIN};
    ASSERT_EQ(poll(&one, 1, 2000), 1); /* one fd, one direction: fb_wait */
    ASSERT_EQ(one.revents, POLLIN);
    struct pollfd two[2] = {{.fd = pa[1], .events = 0}, {.fd = pb[0], .events = POLLIN}};
    ASSERT_EQ(poll(two, 2, 2000), 1); /* several fds: the private epoll fd */
    ASSERT_EQ(two[1].revents, POLLIN);
    char c;
    ASSERT_EQ(read(pb[0], &c, 1), 1);
    two[1].revents = 0;
    t0 = now_ns();
    ASSERT_EQ(poll(two, 2, 25), 0); /* nothing: times out */
    ASSERT_GE(now_ns() - t0, 25 * MS);
    struct pollfd both = {.fd = pb[1], .events = POLLIN | POLLOUT};
    ASSERT_EQ(poll(&both, 1, 100), 1); /* a pipe's write end is writable */
    ASSERT_EQ(both.revents, POLLOUT);
    stop_ticker = true;
}

static void t_poll(void)
{
    ASSERT_EQ(pipe(pa), 0);
    ASSERT_EQ(pipe(pb), 0);
    start();
    fb_spawn(rt, ticker, NULL);
    fb_spawn(rt, poll_main, NULL);
    run_and_finish();
}

/* ---- close: a fiber blocked in recv wakes with EBADF; nothing leaks ------------------------- */

static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

static void blocked_reader(void *arg)
{
    (void)arg;
    char c;
    errno = 0;
    ASSERT_EQ(recv(sp[0], &c, 1, 0), -1);
    ASSERT_EQ(errno, EBADF);
}

static void closer(void *arg)
{
    (void)arg;
    usleep(10 * 1000);
    ASSERT_EQ(close(sp[0]), 0); /* plain close: the hook goes through fb_close */
    ASSERT_EQ(close(sp[1]), 0);
    stop_ticker = true;
}

static void t_close(void)
{
    int base = open_fds();
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    start();
    fb_spawn(rt, ticker, NULL);
    fb_spawn(rt, blocked_reader, NULL);
    fb_spawn(rt, closer, NULL);
    fb_io_stats is;
    ASSERT_EQ(fb_run(rt), 0);
    fb_io_get_stats(io, &is);
    ASSERT_EQ(is.waiters, 0);
    fb_runtime_free(rt);
    fb_io_free(io);
    fb_hook_disable();
    ASSERT_EQ(open_fds(), base);
}

/* ---- accept: a blocking listener, a blocking client, in two fibers --------------------------- */

static int lfd;

static void acceptor(void *arg)
{
    (void)arg;
    int c = accept(lfd, NULL, NULL); /* blocking listener: waits cooperatively */
    ASSERT_GE(c, 0);
    char buf[5] = {0};
    ASSERT_EQ(recv(c, buf, 4, MSG_WAITALL), 4);
    ASSERT_EQ(strcmp(buf, "ping"), 0);
    ASSERT_EQ(send(c, "pong", 4, 0), 4);
    close(c);
    /* accept4 with SOCK_NONBLOCK: the caller asked for EAGAIN on that fd. */
    c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    ASSERT_GE(c, 0);
    errno = 0;
    ASSERT_EQ(recv(c, buf, 4, 0), -1);
    ASSERT_EQ(errno, EAGAIN);
    close(c);
}

static void client(void *arg)
{
    (void)arg;
    usleep(10 * 1000); /* the acceptor waits first */
    for (int i = 0; i < 2; i++) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_EQ(connect(s, (struct sockaddr *)&srv_addr, sizeof srv_addr), 0);
        if (i == 0) {
            ASSERT_EQ(send(s, "ping", 4, 0), 4);
            char buf[5] = {0};
            ASSERT_EQ(read(s, buf, 4), 4);
            ASSERT_EQ(strcmp(buf, "pong"), 0);
        } else {
            usleep(10 * 1000);
        }
        close(s);
    }
    stop_ticker = true;
}

static void t_accept(void)
{
    lfd = listener(&srv_addr, false);
    start();
    fb_spawn(rt, ticker, NULL);
    fb_spawn(rt, acceptor, NULL);
    fb_spawn(rt, client, NULL);
    run_and_finish();
    close(lfd);
    ASSERT_GE(ticks, 1);
}

/* ---- fallthrough: libc everywhere the hooks are not switched on ----------------------------- */

static void *late_writer_thread(void *arg)
{
    usleep(50 * 1000);
    ASSERT_EQ(write((int)(intptr_t)arg, "z", 1), 1);
    return NULL;
}

static void plain_reader(void *arg)
{
    (void)arg;
    char c;
    ASSERT_EQ(read(pa[0], &c, 1), 1); /* hooks off on this thread: blocks the thread */
    stop_ticker = true;
}

static void t_fallthrough(void)
{
    /* The hooks are what a shared library's `recv` resolves to, and they reach libc next. */
    ASSERT_TRUE(dlsym(RTLD_DEFAULT, "recv") == (void *)recv);
    ASSERT_TRUE(dlsym(RTLD_NEXT, "recv") != NULL);
    ASSERT_TRUE(dlsym(RTLD_NEXT, "recv") != (void *)recv);

    /* Hooks enabled, but outside a fiber: libc. */
    ASSERT_EQ(pipe(pa), 0);
    start();
    fb_hook_stats before, after;
    fb_hook_get_stats(&before);
    int64_t t0 = now_ns();
    ASSERT_EQ(usleep(2000), 0);
    ASSERT_GE(now_ns() - t0, 2 * MS);
    ASSERT_EQ(write(pa[1], "y", 1), 1);
    char c;
    ASSERT_EQ(read(pa[0], &c, 1), 1);
    ASSERT_EQ(kernel_flags(pa[0]) & O_NONBLOCK, 0); /* untouched */
    fb_hook_get_stats(&after);
    ASSERT_EQ(after.calls, before.calls);

    /* A fiber runtime whose thread did not enable hooks: a blocking read blocks the thread,
     * so the ticker cannot run during those 50 ms (this is what the hooks are for). */
    fb_hook_disable();
    fb_spawn(rt, ticker, NULL);
    fb_spawn(rt, plain_reader, NULL);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, late_writer_thread, (void *)(intptr_t)pa[1]), 0);
    t0 = now_ns();
    ASSERT_EQ(fb_run(rt), 0);
    ASSERT_GE(now_ns() - t0, 40 * MS);
    ASSERT_LE(ticks, 3);
    fb_hook_get_stats(&after);
    ASSERT_EQ(after.calls, before.calls);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    fb_runtime_free(rt);
    fb_io_free(io);
}

#define TEST_HOOK__ENTRY(name, ...) {#name, t_##name, #__VA_ARGS__},
static const test_case cases[] = {TEST_HOOK_CASES(TEST_HOOK__ENTRY)};
#undef TEST_HOOK__ENTRY

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        TEST_CASE_LIST(cases);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: test-hook CASE ENGINE | test-hook --list\n");
        return 2;
    }
    engine_name = argv[2];
    if (!eng_find(engine_name)) {
        fprintf(stderr, "test-hook: unknown engine '%s' (valid: %s)\n", argv[2], eng_names());
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    TEST_CASE_REQUIRE("test-hook", cases, argv[1])();
    printf("ok %s/%s\n", argv[1], argv[2]);
    return 0;
}
