/* srv_test_memory.c - srv-test scenario `nomem_burst`: many connections at once, all with a
 * request in flight, while the server's address space is capped. */
#include "srv_test.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define BURST_CONNS  1000 /* connections open at once in a round */
#define BURST_ROUNDS 3
#define BURST_SIZE   64
#define BURST_SPARE  (6000L << 10) /* address space left above what the server maps idle */
#define BURST_WAIT   10000         /* ms for every reply of a round */

static long vm_size_kb(pid_t pid)
{
    char path[64], line[256];
    long kb = 0;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        sscanf(line, "VmSize: %ld kB", &kb);
    if (f) fclose(f);
    ASSERT_MSG(kb > 0, "no VmSize in %s", path);
    return kb;
}

static void fill(unsigned char *buf, int seed)
{
    for (int i = 0; i < BURST_SIZE; i++)
        buf[i] = (unsigned char)(seed * 31 + i);
}

/*
 * The reply on fd by the deadline: TC_OK when it is the request's bytes, TC_CLOSED or
 * TC_RESET when the server closed the connection, TC_TIMEOUT or TC_MISMATCH otherwise.
 */
static int reply(int fd, int seed, long long deadline)
{
    unsigned char want[BURST_SIZE], got[BURST_SIZE];
    size_t have = 0;
    fill(want, seed);
    while (have < sizeof got) {
        struct pollfd p = {fd, POLLIN, 0};
        int left = (int)(deadline - tc_now_ms());
        if (left <= 0 || poll(&p, 1, left) == 0) return TC_TIMEOUT;
        ssize_t n = recv(fd, got + have, sizeof got - have, 0);
        if (n == 0) return TC_CLOSED;
        if (n < 0) return errno == ECONNRESET ? TC_RESET : TC_ERROR;
        have += (size_t)n;
    }
    return memcmp(want, got, sizeof got) ? TC_MISMATCH : TC_OK;
}

/* One round: BURST_CONNS connections, each sends its request before any reply is read.
 * Returns how many were closed unserved; any other outcome fails the test. */
static int burst(struct tc_server *s, int round)
{
    static int fds[BURST_CONNS];
    unsigned char req[BURST_SIZE];
    for (int i = 0; i < BURST_CONNS; i++) {
        fds[i] = tc_connect(s->port);
        ASSERT_MSG(fds[i] >= 0, "round %d: connect %d: %s", round, i, strerror(errno));
    }
    for (int i = 0; i < BURST_CONNS; i++) {
        fill(req, i);
        send(fds[i], req, sizeof req, MSG_NOSIGNAL); /* a closed one shows in its reply */
    }
    long long deadline = tc_now_ms() + BURST_WAIT;
    int closed = 0;
    for (int i = 0; i < BURST_CONNS; i++) {
        int rc = reply(fds[i], i, deadline);
        ASSERT_MSG(rc == TC_OK || rc == TC_CLOSED || rc == TC_RESET,
                   "round %d, connection %d: %s (served or closed, nothing else)", round, i,
                   tc_rc_name(rc));
        closed += rc != TC_OK;
        close(fds[i]);
    }
    return closed;
}

/*
 * The address space capped a few MiB above what the idle server maps, then rounds of a
 * thousand connections that all send before any reads: the server sheds what it has no memory
 * for (each such connection closed and counted in spawn_failed, one log line), serves the rest
 * exactly, never crashes, and serves normally again once the cap is lifted.
 */
void t_nomem_burst(void)
{
    struct tc_server s;
    st_start(&s);
    const char *kind = st_model_prop(s.model, "concurrency"); /* points into the JSON */
    if (strncmp(kind, "\"process-", 9) == 0) {
        printf("not run: %s's connections get a process of their own: its accepting process "
               "allocates nothing per connection\n",
               s.model);
        tc_server_stop(&s, SIGTERM);
        exit(77);
    }
    close(st_fresh(&s, 1, 100));
    long vm_kb = vm_size_kb(s.pid);
    struct rlimit cap = {(rlim_t)vm_kb * 1024 + BURST_SPARE, RLIM_INFINITY},
                  open_cap = {RLIM_INFINITY, RLIM_INFINITY};
    ASSERT_MSG(prlimit(s.pid, RLIMIT_AS, &cap, NULL) == 0, "prlimit: %s", strerror(errno));
    int closed = 0;
    for (int r = 0; r < BURST_ROUNDS; r++) {
        int c = burst(&s, r);
        ASSERT_MSG(kill(s.pid, 0) == 0, "round %d: the server is gone", r);
        tc_note("round %d: %d of %d connections closed unserved", r, c, BURST_CONNS);
        closed += c;
    }
    ASSERT_MSG(prlimit(s.pid, RLIMIT_AS, &open_cap, NULL) == 0, "prlimit: %s", strerror(errno));
    ASSERT_MSG(closed > 0, "every connection served under a cap of %ld KiB: nothing ran out",
               vm_kb + (BURST_SPARE >> 10));
    close(st_fresh(&s, 2, 100));
    tc_note("cap lifted: new connections served again");
    tc_server_stop(&s, SIGTERM);
    uint64_t failed = tc_stat(&s, "spawn_failed");
    ASSERT_MSG(failed >= (uint64_t)closed, "spawn_failed %llu < %d closed unserved",
               (unsigned long long)failed, closed);
    ASSERT_EQ(tc_server_log_count(&s, "connection closed"), 1);
}
