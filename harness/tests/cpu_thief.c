/* cpu_thief.c - a stand-in for a host that holds a vCPU back, for harness/tests/host_pace_cases.py:
 * at real-time priority on the CPU it is pinned to, it spins 10 us and sleeps 10 us in turn
 * for the seconds given, so that whatever else runs there gets about half the CPU in slices
 * shorter than the probe's spin (as the host's time-slicing did on the AMD EPYC VM), not in
 * whole periods around it.
 *
 * usage: cpu-thief SECONDS    exit 0 when done, 77 when it may not take real-time priority,
 *                             2 on bad usage */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    char *end;
    double secs = argc == 2 ? strtod(argv[1], &end) : -1;
    if (argc != 2 || *end || secs <= 0 || secs > 10) {
        fprintf(stderr, "cpu-thief: want SECONDS, above 0 and at most 10\n");
        return 2;
    }
    struct sched_param p = {.sched_priority = 50};
    if (sched_setscheduler(0, SCHED_FIFO, &p) != 0) {
        fprintf(stderr, "cpu-thief: no real-time priority here (errno %d)\n", errno);
        return 77;
    }
    long long stop = now_ns() + (long long)(secs * 1e9);
    struct timespec nap = {0, 10000};
    while (now_ns() < stop) {
        long long t = now_ns() + 10000;
        while (now_ns() < t)
            ;
        clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
    }
    return 0;
}
