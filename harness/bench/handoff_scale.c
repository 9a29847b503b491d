/* handoff_scale.c - CPU time per hand-off with m contexts handing off in pairs
 * on one CPU. */
#define _GNU_SOURCE
#include "fiber.h"
#include "switch.h"

#include <errno.h>
#include <getopt.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Claim C15 (seed 003): the kernel keeps runnable tasks in a red-black tree, so
 * every block and wake costs O(log m) in the m active contexts. m contexts form
 * m/2 pairs; in each pair one side wakes the other and then blocks until woken
 * back, so one context per pair is runnable at any moment and m/2 are runnable
 * together. Everything runs on one CPU.
 *
 *   --kind thread  kernel threads; the hand-off is FUTEX_WAKE of the partner
 * then FUTEX_WAIT until the pair's turn word says it is ours again (the futex
 * hand-off of switch-bench's kernel/thread_pingpong rows, scaled out to m
 * threads);
 *   --kind fiber   fibers of one runtime (engines/fiber.h) on one thread:
 * fb_wake(partner) then fb_park, so the runtime switches to the next runnable
 * fiber.
 *
 * One hand-off = one context giving the CPU up after handing the turn to its
 * partner. The figure is the process's CPU time (getrusage, user + system) over
 * the measured interval divided by the hand-offs in it, so time stolen by other
 * tenants of the machine does not count; wall time is printed beside it. Prints
 * one JSON line.
 */

#define MAX_CONTEXTS 20000
#define THREAD_STACK (64 * 1024)
#define FIBER_STACK  (16 * 1024)
#define CALIBRATE_S  0.05

struct pair {
    _Atomic int turn; /* 0 or 1: whose turn; 2: stop */
    _Atomic uint64_t handoffs;
    char pad[64 - sizeof(int) - sizeof(uint64_t)];
};

struct side {
    struct pair *p;
    int me;
    fiber *self;        /* fibers only, as are the rest */
    struct side *other; /* the partner */
    uint64_t left;      /* hand-offs still to make */
    bool done;
};

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long futex(_Atomic int *w, int op, int val)
{
    return syscall(SYS_futex, (int *)w, op, val, NULL, NULL, 0);
}

/* ---- kernel threads
 * -------------------------------------------------------------------- */

static void *thread_side(void *arg)
{
    struct side *s = arg;
    struct pair *p = s->p;
    for (;;) {
        int t;
        while ((t = atomic_load(&p->turn)) != s->me && t != 2)
            futex(&p->turn, FUTEX_WAIT_PRIVATE, t);
        if (t == 2) return NULL;
        atomic_fetch_add_explicit(&p->handoffs, 1, memory_order_relaxed);
        int expect = s->me;
        atomic_compare_exchange_strong(&p->turn, &expect, 1 - s->me);
        futex(&p->turn, FUTEX_WAKE_PRIVATE, 1);
    }
}

static uint64_t total(struct pair *ps, int np)
{
    uint64_t n = 0;
    for (int i = 0; i < np; i++)
        n += atomic_load_explicit(&ps[i].handoffs, memory_order_relaxed);
    return n;
}

/* Pin the calling thread to one CPU. */
static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/*
 * The m threads run on `cpu`; the main thread, which creates them and keeps the time, runs on
 * another CPU when there is one: among thousands of runnable threads on one CPU it would get
 * a thousandth of it, and each of its sleeps would last many times too long.
 */
static int run_threads(int m, int cpu_no, double seconds, double *cpu, double *wall, uint64_t *n)
{
    int np = m / 2;
    struct pair *ps = calloc((size_t)np, sizeof *ps);
    struct side *ss = calloc((size_t)m, sizeof *ss);
    pthread_t *th = calloc((size_t)m, sizeof *th);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, THREAD_STACK);
    cpu_set_t one, mine;
    CPU_ZERO(&one);
    CPU_SET(cpu_no, &one);
    pthread_attr_setaffinity_np(&attr, sizeof one, &one);
    if (sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) > 1)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (c != cpu_no && CPU_ISSET(c, &mine)) {
                pin(c);
                break;
            }
    int started = 0, rc = 0;
    if (!ps || !ss || !th) return -1;
    for (; started < m; started++) {
        ss[started] = (struct side){.p = &ps[started / 2], .me = started % 2};
        if ((rc = pthread_create(&th[started], &attr, thread_side, &ss[started])) != 0) break;
    }
    pthread_attr_destroy(&attr);
    if (started == m) {
        /* Warm up until every pair has handed off, then measure. */
        nanosleep(&(struct timespec){0, 200000000}, NULL);
        uint64_t n0 = total(ps, np);
        double c0 = cpu_seconds(), w0 = wall_seconds();
        nanosleep(
            &(struct timespec){(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)},
            NULL);
        *n = total(ps, np) - n0;
        *cpu = cpu_seconds() - c0;
        *wall = wall_seconds() - w0;
    }
    for (int i = 0; i < np; i++) {
        atomic_store(&ps[i].turn, 2);
        futex(&ps[i].turn, FUTEX_WAKE_PRIVATE, 2);
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(ps);
    free(ss);
    free(th);
    if (started < m) {
        errno = rc;
        return -1;
    }
    return 0;
}

/* ---- fibers
 * ----------------------------------------------------------------------------
 */

static void fiber_side(void *arg)
{
    struct side *s = arg;
    struct pair *p = s->p;
    while (s->left > 0) {
        while (atomic_load_explicit(&p->turn, memory_order_relaxed) != s->me)
            fb_park();
        s->left--;
        atomic_fetch_add_explicit(&p->handoffs, 1, memory_order_relaxed);
        atomic_store_explicit(&p->turn, 1 - s->me, memory_order_relaxed);
        /* Both sides make the same number of hand-offs, so the last one finds it
         * finished. */
        if (!s->other->done) fb_wake(s->other->self);
    }
    s->done = true;
}

static int fiber_round(const sw_backend *b, int m, uint64_t per_side, double *cpu, double *wall,
                       uint64_t *n)
{
    int np = m / 2;
    struct pair *ps = calloc((size_t)np, sizeof *ps);
    struct side *ss = calloc((size_t)m, sizeof *ss);
    fb_config cfg = {.backend = b, .policy = FB_RING, .stack_size = FIBER_STACK};
    fb_runtime *rt = fb_runtime_new(&cfg);
    int rc = -1;
    if (!ps || !ss || !rt) goto out;
    for (int i = 0; i < m; i++) {
        ss[i] = (struct side){.p = &ps[i / 2], .me = i % 2, .left = per_side};
        if (!(ss[i].self = fb_spawn_joinable(rt, fiber_side, &ss[i]))) goto out;
    }
    for (int i = 0; i < m; i++)
        ss[i].other = &ss[i ^ 1];
    double c0 = cpu_seconds(), w0 = wall_seconds();
    if (fb_run(rt) != 0) goto out;
    *cpu = cpu_seconds() - c0;
    *wall = wall_seconds() - w0;
    *n = total(ps, np);
    rc = 0;
out:
    if (rt) fb_runtime_free(rt);
    free(ps);
    free(ss);
    return rc;
}

/* Size the run from a short calibration round so it lasts about `seconds` of
 * CPU. */
static int run_fibers(int m, double seconds, double *cpu, double *wall, uint64_t *n)
{
    const sw_backend *b = sw_backend_at(0);
    uint64_t per = 1000;
    for (;;) {
        if (fiber_round(b, m, per, cpu, wall, n) < 0) return -1;
        if (*cpu >= CALIBRATE_S || per > (UINT64_C(1) << 30)) break;
        per *= 4;
    }
    double want = seconds / (*cpu > 0 ? *cpu : 1e-3) * (double)per;
    return fiber_round(b, m, want > (double)per ? (uint64_t)want : per, cpu, wall, n);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: handoff-scale --kind thread|fiber --contexts M [--seconds S] "
            "[--cpu C]\n"
            "M contexts (even, 2..%d) hand off in M/2 pairs on CPU C (default "
            "0); prints one\n"
            "JSON line with the CPU time per hand-off.\n",
            MAX_CONTEXTS);
}

static void __attribute__((noreturn)) bad(const char *what)
{
    fprintf(stderr, "handoff-scale: %s (see --help)\n", what);
    exit(2);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"kind", required_argument, 0, 'k'},    {"contexts", required_argument, 0, 'm'},
        {"seconds", required_argument, 0, 's'}, {"cpu", required_argument, 0, 'c'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    const char *kind = NULL;
    long m = 0, cpu_no = 0;
    double seconds = 1.0;
    char *end;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, ":", opts, NULL)) != -1;) {
        switch (c) {
        case 'k':
            kind = optarg;
            break;
        case 'm':
            m = strtol(optarg, &end, 10);
            if (*end || m < 2 || m > MAX_CONTEXTS || m % 2)
                bad("--contexts wants an even number from 2 to 20000");
            break;
        case 's':
            seconds = strtod(optarg, &end);
            if (*end || !(seconds >= 0.01 && seconds <= 600)) bad("--seconds wants 0.01 to 600");
            break;
        case 'c':
            cpu_no = strtol(optarg, &end, 10);
            if (*end || cpu_no < 0 || cpu_no >= CPU_SETSIZE) bad("--cpu wants a CPU number");
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            bad("unknown option or missing value (valid: --kind, --contexts, "
                "--seconds, --cpu)");
        }
    }
    if (optind < argc) bad("unexpected argument (valid: --kind, --contexts, --seconds, --cpu)");
    if (!kind || (strcmp(kind, "thread") && strcmp(kind, "fiber")))
        bad("--kind must be thread or fiber");
    if (!m) bad("--contexts is required");
    bool threads = strcmp(kind, "thread") == 0;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || !CPU_ISSET((int)cpu_no, &allowed) ||
        (!threads && pin((int)cpu_no) != 0)) {
        fprintf(stderr, "handoff-scale: cannot run on CPU %ld\n", cpu_no);
        return 1;
    }
    double cpu = 0, wall = 0;
    uint64_t n = 0;
    int rc = threads ? run_threads((int)m, (int)cpu_no, seconds, &cpu, &wall, &n)
                     : run_fibers((int)m, seconds, &cpu, &wall, &n);
    if (rc < 0 || n == 0) {
        printf("{\"kind\":\"%s\",\"contexts\":%ld,\"status\":\"not "
               "run\",\"reason\":\"%s\"}\n",
               kind, m, rc < 0 ? strerror(errno) : "no hand-off completed");
        return 3;
    }
    printf("{\"kind\":\"%s\",\"contexts\":%ld,\"runnable\":%ld,\"cpu\":%ld,"
           "\"status\":\"ok\","
           "\"handoffs\":%llu,\"cpu_s\":%.6f,\"wall_s\":%.6f,\"cpu_ns_per_"
           "handoff\":%.3f,"
           "\"wall_ns_per_handoff\":%.3f}\n",
           kind, m, m / 2, cpu_no, (unsigned long long)n, cpu, wall, cpu * 1e9 / (double)n,
           wall * 1e9 / (double)n);
    return 0;
}
