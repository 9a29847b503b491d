/* timer_lateness.c - how late a fiber's sleep wakes under each timer structure.
 *
 *   timer-lateness --timers NAME [--sleeps N] [--sleep-us U] [--pending P] [--engine E]
 *
 * One fiber sleeps N times for U microseconds (fb_sleep_until a deadline U after now) and
 * records how long after its deadline it ran again (CLOCK_MONOTONIC). P other fibers sleep far
 * beyond the run meanwhile (deadlines spread over 10 to 20 s), so the structure holds P + 1
 * timers. The lateness is the structure's rounding plus the engine's wait and the kernel's
 * wake-up: harness/experiments/timers.py sets it beside cyclictest's figure, the kernel's own
 * floor. Prints one JSON line: {"timers", "engine", "sleeps", "sleep_us", "pending", "lateness_us":
 * {"p50", "p99", "max", "mean"}}, then exits without waiting for the far sleepers.
 */
#include "cli_args.h"
#include "fiber.h"
#include "io.h"
#include "switch.h"
#include "timer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct plan {
    long sleeps, sleep_us, pending;
    const tm_ops *timers;
    const char *engine;
    int64_t *late; /* ns, one per sleep */
};

#define bad(...) cli_bad("timer-lateness", __VA_ARGS__)

static long number(const char *flag, const char *s, long lo, long hi)
{
    return cli_long("timer-lateness", flag, s, lo, hi);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double quantile_us(const int64_t *sorted, long n, double q)
{
    long i = (long)(q * (double)(n - 1) + 0.5);
    return (double)sorted[i] / 1e3;
}

static void far_sleeper(void *arg)
{
    fb_sleep_until((int64_t)(intptr_t)arg);
}

static void report(const struct plan *p)
{
    qsort(p->late, (size_t)p->sleeps, sizeof *p->late, cmp_i64);
    double sum = 0;
    for (long i = 0; i < p->sleeps; i++)
        sum += (double)p->late[i];
    printf("{\"timers\":\"%s\",\"engine\":\"%s\",\"sleeps\":%ld,\"sleep_us\":%ld,\"pending\":%ld,"
           "\"lateness_us\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f,\"mean\":%.3f}}\n",
           p->timers->name, p->engine, p->sleeps, p->sleep_us, p->pending,
           quantile_us(p->late, p->sleeps, 0.5), quantile_us(p->late, p->sleeps, 0.99),
           (double)p->late[p->sleeps - 1] / 1e3, sum / (double)p->sleeps / 1e3);
    fflush(stdout);
}

static void measurer(void *arg)
{
    struct plan *p = arg;
    for (long i = 0; i < p->sleeps; i++) {
        int64_t deadline = tm_now() + p->sleep_us * 1000;
        fb_sleep_until(deadline);
        p->late[i] = tm_now() - deadline;
        if (p->late[i] < 0) bad("a sleep woke %lld ns early", (long long)-p->late[i]);
    }
    report(p);
    exit(0); /* the far sleepers are not waited for */
}

/* Static: the process exits from the measuring fiber's stack, where a leak checker does not
 * see main's frame, and the plan (with its samples) must stay reachable. */
static struct plan p = {.sleeps = 1000, .sleep_us = 1000, .engine = "merged"};

int main(int argc, char **argv)
{
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (i + 1 >= argc) bad("%s needs a value", f);
        const char *v = argv[++i];
        if (!strcmp(f, "--timers"))
            name = v;
        else if (!strcmp(f, "--sleeps"))
            p.sleeps = number(f, v, 1, 10000000);
        else if (!strcmp(f, "--sleep-us"))
            p.sleep_us = number(f, v, 1, 10000000);
        else if (!strcmp(f, "--pending"))
            p.pending = number(f, v, 0, 10000000);
        else if (!strcmp(f, "--engine"))
            p.engine = v;
        else
            bad("unknown option '%s' (valid: --timers, --sleeps, --sleep-us, --pending, --engine)",
                f);
    }
    if (!name) bad("--timers is required (valid: %s)", tm_names());
    if (!(p.timers = tm_find(name))) bad("unknown --timers '%s' (valid: %s)", name, tm_names());
    if (!(p.late = malloc((size_t)p.sleeps * sizeof *p.late))) bad("out of memory");
    fb_io *io = fb_io_new(p.engine);
    if (!io) bad("--engine %s: %s", p.engine, strerror(errno));
    fb_config cfg = {.backend = sw_backend_at(0),
                     .policy = FB_RING,
                     .stack_size = 16 * 1024,
                     .poller = fb_io_poller(io),
                     .timers = p.timers};
    fb_runtime *rt = fb_runtime_new(&cfg);
    if (!rt) bad("fiber runtime: %s", strerror(errno));
    int64_t far = tm_now() + (int64_t)10 * 1000000000;
    for (long i = 0; i < p.pending; i++) {
        int64_t at = far + (int64_t)((double)i / (double)p.pending * 1e10);
        if (!fb_spawn(rt, far_sleeper, (void *)(intptr_t)at)) bad("spawn: %s", strerror(errno));
    }
    if (!fb_spawn(rt, measurer, &p)) bad("spawn: %s", strerror(errno));
    fb_run(rt);
    bad("the runtime ended before the measurement");
}
