/* test-io.c - the fiber IO conformance matrix (every case for every engine and scheduler): the
 * command line, and the fixture every case shares. */
#define _GNU_SOURCE
#include "test-io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: test-io CASE ENGINE star|ring [eager|wait|adaptive] [guarded|copy[:K]]. One CTest test
 * per combination, each its own process (engines/io/<case>/<engine>/<sched>/<read policy or
 * copy>; the read policy is eager and the stacks are guarded when not given). The switch backend
 * is the registry's first: the cases test IO, not switching. Loopback only, every wait bounded.
 * The cases are declared in test-io-cases.h and live in test-io-<area>.c; `test-io --list`
 * prints them.
 */

const char *engine_name;
fb_policy policy;
fb_read_policy read_policy = FB_READ_EAGER;
fb_io *io;
fb_runtime *rt;
static fb_stack_mode stack_mode; /* optional 4th argument: guarded (default) or copy[:K] */
static unsigned shared_stacks;

int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void start(size_t stack_size)
{
    const sw_backend *b = sw_backend_at(0); /* the registry's first: the fastest class */
    io = fb_io_new(engine_name);
    if (!io && (errno == ENOSYS || errno == EPERM || errno == EACCES)) {
        printf("not run: %s: the kernel refused it: %s\n", engine_name, strerror(errno));
        exit(77);
    }
    if (!io) {
        perror("fb_io_new");
        exit(1);
    }
    fb_io_set_read_policy(io, read_policy);
    fb_config cfg = {.backend = b,
                     .policy = policy,
                     .stack_size = stack_size,
                     .poller = fb_io_poller(io),
                     .stack_mode = stack_mode,
                     .shared_stacks = shared_stacks};
    rt = fb_runtime_new(&cfg);
    if (!rt) {
        perror("fb_runtime_new");
        exit(1);
    }
}

void spawn(void (*fn)(void *), void *arg)
{
    if (!fb_spawn(rt, fn, arg)) {
        perror("fb_spawn");
        exit(1);
    }
}

void run_all(void)
{
    ASSERT_EQ(fb_run(rt), 0);
    fb_io_stats st;
    fb_io_get_stats(io, &st);
    ASSERT_EQ(st.waiters, 0);
    ASSERT_EQ(st.sleepers, 0);
}

void finish(void)
{
    fb_runtime_free(rt);
    fb_io_free(io);
}

void unix_pair(int sv[2])
{
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

void fill(int fd)
{
    static char junk[65536];
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    while (write(fd, junk, sizeof junk) > 0)
        ;
    ASSERT_EQ(errno, EAGAIN);
}

int tcp_listener(struct sockaddr_in *a)
{
    socklen_t alen = sizeof *a;
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(l, (struct sockaddr *)a, sizeof *a), 0);
    ASSERT_EQ(listen(l, 64), 0);
    ASSERT_EQ(getsockname(l, (struct sockaddr *)a, &alen), 0);
    return l;
}

#define TEST_IO__ENTRY(name, ...) {#name, t_##name, #__VA_ARGS__},
static const test_case cases[] = {TEST_IO_CASES(TEST_IO__ENTRY)};
#undef TEST_IO__ENTRY

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        TEST_CASE_LIST(cases);
        return 0;
    }
    /* Optional trailing arguments, in any order: a read policy, a stack mode. */
    bool bad_arg = argc < 4 || argc > 6;
    for (int i = 4; !bad_arg && i < argc; i++)
        bad_arg = fb_read_policy_parse(argv[i], &read_policy) != 0 &&
                  fb_stack_mode_parse(argv[i], &stack_mode, &shared_stacks) != 0;
    if (bad_arg) {
        fprintf(stderr,
                "usage: test-io CASE ENGINE star|ring [%s] [guarded|copy[:K]] | test-io --list\n",
                fb_read_policy_names());
        return 2;
    }
    engine_name = argv[2];
    if (!eng_find(engine_name)) {
        fprintf(stderr, "test-io: unknown engine '%s' (valid: %s)\n", argv[2], eng_names());
        return 2;
    }
    if (fb_policy_parse(argv[3], &policy) < 0) {
        fprintf(stderr, "test-io: unknown scheduler '%s' (valid: star, ring)\n", argv[3]);
        return 2;
    }
    TEST_CASE_REQUIRE("test-io", cases, argv[1])();
    printf("ok %s/%s/%s/%s/%s\n", argv[1], argv[2], argv[3], fb_read_policy_name(read_policy),
           fb_stack_mode_name(stack_mode));
    return 0;
}
