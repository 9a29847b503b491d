/* host_pace.c - how fast the CPU it runs on is now, read as a fixed spin timed at short
 * intervals, for the timed windows of the harness (harness/lib/host_pace.py). */
#define _GNU_SOURCE
#include "cli_args.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: host-pace [--period-ms MS] [--spin N] [--max-samples K]
 *
 * Every MS milliseconds (default 10) it times N iterations of a fixed loop (default 25,000
 * loads, adds and stores in a 4 KiB buffer), until its standard input ends or it gets SIGTERM,
 * then prints one JSON line: the loop's wall time in ns at each sample, in order.
 *
 * Why: a Firecracker guest reports no steal time, and its host at times gives a vCPU a third of
 * its speed for seconds (on the AMD EPYC VM, for five seconds, a spin like this one 2.5x
 * slower and an epoll echo server's throughput 86,000 instead of 125,000 req/s). A server's CPU
 * time per request counts those seconds as its own. Pinned beside the server, the spin's time
 * says whether a window was measured at the machine's speed; at 11 us every 10 ms it takes
 * 0.1% of the CPU, the same for every server it watches.
 *
 * The loop is bound by the core's load and store units, not by one instruction's latency: the
 * host also slows a vCPU without descheduling it, by what it runs beside it on the same
 * physical core. On the AMD EPYC VM a chain of dependent multiply-adds kept 0.95-0.99 of its
 * calm time through 20 s in which this loop took 1.4x its own, and through a stretch in which
 * this loop read 1.8x and the echo servers beside it spent 1.5x their CPU per request. Not every
 * such stretch slows every program (results/notes/harness.md has one that spared the servers):
 * a window it marks is taken again, never corrected by it. The reading of the samples (the
 * window's floor, the share of slow samples) is the harness's, where it can be tested.
 *
 * Bad usage exits 2 with one line on standard error.
 */

enum { DEFAULT_PERIOD_MS = 10, DEFAULT_SPIN = 25000, DEFAULT_MAX = 100000, SPIN_WORDS = 512 };

#define USAGE "host-pace [--period-ms MS] [--spin N] [--max-samples K]"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The loop's result, stored so that the compiler cannot drop the loop. */
volatile uint64_t host_pace_sink;

/* The buffer stays in the L1 cache, so the loop's time is the core's, not the memory's. */
static uint64_t spin_words[SPIN_WORDS];

/* The loop timed: a load, an add and a store per step, at a stride (7 words) that keeps a
 * store from feeding a load soon after it, so steps overlap as far as the core's units allow. */
static void spin(long n)
{
    uint64_t s = 1;
    for (long i = 0; i < n; i++) {
        size_t k = (size_t)(i * 7) & (SPIN_WORDS - 1);
        s += spin_words[k];
        spin_words[(k + 3) & (SPIN_WORDS - 1)] = s;
    }
    host_pace_sink = s;
}

int main(int argc, char **argv)
{
    long period_ms = DEFAULT_PERIOD_MS, n = DEFAULT_SPIN, max = DEFAULT_MAX;
    for (int i = 1; i < argc; i += 2) {
        long *to, limit;
        if (!strcmp(argv[i], "--period-ms"))
            to = &period_ms, limit = 10000;
        else if (!strcmp(argv[i], "--spin"))
            to = &n, limit = 1000000000;
        else if (!strcmp(argv[i], "--max-samples"))
            to = &max, limit = 10000000;
        else
            cli_bad("host-pace", "unknown argument '%s' (usage: %s)", argv[i], USAGE);
        if (i + 1 >= argc) cli_bad("host-pace", "%s wants a value (usage: %s)", argv[i], USAGE);
        *to = cli_long("host-pace", argv[i], argv[i + 1], 1, limit);
    }
    int64_t *ns = malloc((size_t)max * sizeof *ns), *at = malloc((size_t)max * sizeof *at);
    if (!ns || !at) {
        fprintf(stderr, "host-pace: no memory for %ld samples\n", max);
        free(ns);
        free(at);
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    long got = 0;
    struct pollfd in = {.fd = 0, .events = POLLIN};
    while (!stop && got < max) {
        int64_t t0 = now_ns();
        spin(n);
        ns[got] = now_ns() - t0;
        at[got++] = t0;
        /* Standard input is only watched for its end: the caller closes it to stop us. */
        int r = poll(&in, 1, (int)period_ms);
        if (r > 0) {
            char buf[256];
            if (read(0, buf, sizeof buf) <= 0) break;
        } else if (r < 0 && errno != EINTR) {
            break;
        }
    }
    printf("{\"spin\":%ld,\"period_ms\":%ld,\"samples_ns\":[", n, period_ms);
    for (long i = 0; i < got; i++)
        printf("%s%lld", i ? "," : "", (long long)ns[i]);
    printf("],\"at_ns\":[");
    for (long i = 0; i < got; i++)
        printf("%s%lld", i ? "," : "", (long long)at[i]);
    printf("]}\n");
    free(ns);
    free(at);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
