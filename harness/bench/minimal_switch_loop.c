/* minimal_switch_loop.c - ns per switch of each backend, timed by a plain loop with no
 * benchmark library: an instrument beside switch-bench's switch/<backend> rows. */
#define _GNU_SOURCE
/* The compiler-assisted jumps inline in the loops: each loop has its backend's kind as a constant
 * (switch_cc.h). */
#define SW_JUMP_INLINE_CC
#include "switch.h"
#include "switch_backends.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * What it shares with switch-bench is only the switch layer: the jump site sw_jump_direct,
 * which every timed switch of the project goes through (the fiber runtime's and
 * switch-bench's). Everything that decides the figure is its own: the loop count is fixed on
 * the command line (no adaptive iteration count), the clock is this thread's CPU clock read
 * once before and once after the loop, and nothing is subtracted. If the two disagree, one
 * of the two timing methods is wrong, not the switch.
 *
 *   minimal-switch-loop [--loops N] [--backend NAME]
 *
 * prints one JSON line: {"loops": N, "clock": ..., "backends": {name: {"status": "ok",
 * "switches": 2N, "cpu_ns": ..., "ns_per_switch": ...}}}; a backend whose pair cannot be set
 * up gets {"status": "not run", "reason": ...}.
 */

#define STACK_BYTES  (64 * 1024)
#define WARMUP_LOOPS 10000L

typedef struct pair {
    sw_ctx self, peer;
    sw_stack stack;
    const sw_backend *backend;
    volatile bool stop;
} pair;

/* One loop per backend so the jump is a direct call with a constant kind, as in
 * harness/bench/bench_loops.c: an indirect call would cost about as much as the switch. */
#define DEFINE_LOOP(id)                                                                            \
    static void loop_##id(pair *p, long n)                                                         \
    {                                                                                              \
        for (long i = 0; i < n; i++)                                                               \
            sw_jump_direct(SW_KIND_##id, &p->backend, &p->self, &p->peer);                         \
    }                                                                                              \
    static void peer_##id(void *arg)                                                               \
    {                                                                                              \
        pair *p = arg;                                                                             \
        while (!p->stop)                                                                           \
            sw_jump_direct(SW_KIND_##id, &p->backend, &p->peer, &p->self);                         \
    }
SW_BACKENDS(DEFINE_LOOP)

struct loop {
    const sw_backend *backend;
    void (*run)(pair *p, long n);
    sw_entry_fn peer;
};
#define LOOP_ENTRY(id) {&sw_backend_##id, loop_##id, peer_##id},
static const struct loop loops[] = {SW_BACKENDS(LOOP_ENTRY)};

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Times n round trips (2n switches) of one backend; prints its JSON member. */
static void measure(const struct loop *l, long n, bool first)
{
    const char *name = l->backend->name;
    printf("%s\"%s\":", first ? "" : ",", name);
    pair p = {.backend = l->backend};
    if (sw_stack_alloc(&p.stack, STACK_BYTES) != 0) {
        printf("{\"status\":\"not run\",\"reason\":\"stack: %s\"}", strerror(errno));
        return;
    }
    if (sw_init_self(&p.self, l->backend) != 0 ||
        sw_make(&p.peer, l->backend, &p.stack, l->peer, &p, &p.self) != 0) {
        printf("{\"status\":\"not run\",\"reason\":\"context: %s\"}", strerror(errno));
        sw_stack_free(&p.stack);
        return;
    }
    /* The peer starts, then a warm-up brings both stacks and the code into the caches. */
    sw_jump(&p.self, &p.peer);
    l->run(&p, WARMUP_LOOPS);
    double t0 = thread_cpu_ns();
    l->run(&p, n);
    double t1 = thread_cpu_ns();
    p.stop = true;
    sw_jump(&p.self, &p.peer); /* the peer's entry returns; its link brings us back */
    sw_stack_free(&p.stack);
    printf("{\"status\":\"ok\",\"switches\":%ld,\"cpu_ns\":%.0f,\"ns_per_switch\":%.4f}", 2 * n,
           t1 - t0, (t1 - t0) / (2.0 * (double)n));
}

static int usage(const char *why)
{
    fprintf(stderr,
            "minimal-switch-loop: %s\nusage: minimal-switch-loop [--loops N] [--backend NAME]\n"
            "backends: %s\n",
            why, sw_backend_names());
    return 2;
}

int main(int argc, char **argv)
{
    long n = 2000000;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--loops") == 0 && i + 1 < argc) {
            char *end;
            n = strtol(argv[++i], &end, 10);
            if (*end || n < 1) return usage("--loops needs a whole number of at least 1");
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            only = argv[++i];
            if (!sw_backend_find(only)) return usage("unknown backend");
        } else {
            return usage("unknown argument");
        }
    }
    printf("{\"loops\":%ld,\"clock\":\"CLOCK_THREAD_CPUTIME_ID\",\"unit\":\"ns per switch\","
           "\"backends\":{",
           n);
    bool first = true;
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++) {
        if (only && strcmp(only, loops[i].backend->name) != 0) continue;
        measure(&loops[i], n, first);
        first = false;
    }
    printf("}}\n");
    return 0;
}
