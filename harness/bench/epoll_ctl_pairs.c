/* epoll_ctl_pairs.c - one EPOLL_CTL_ADD + EPOLL_CTL_DEL pair's CPU time against the number of
 * fds registered in the epoll instance (claim C14), the levels measured in alternation. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: epoll-ctl-pairs [--levels N,N,...] [--blocks B] [--seconds S] [--pairs P]
 *
 * One epoll instance per level holds the first N of a shared set of eventfds (an fd may be
 * registered in several instances; nothing is ever ready). A block times P pairs of a probe
 * eventfd on every level in turn, starting at a different level each block, so that the
 * levels of one block ran within milliseconds of each other: the machine's drift (another
 * tenant, a frequency change, the kernel's slab state) is common to a block and cancels in
 * its ratios, where timing each level in a pass of its own left a 10% trend in +-15% of
 * pass-to-pass noise on a Firecracker guest. B blocks run after one uncounted block of
 * warm-up, which also measures each level's pair: P is chosen from it so that the B blocks
 * take about S seconds of CPU, unless --pairs fixes it.
 *
 * Prints one JSON line: the levels, the warm-up's price of each level's pair, the ns of CPU
 * time per pair of every level in every block, and the epoll_ctl calls made (setup included), which
 * a test checks against the kernel's syscalls:sys_enter_epoll_ctl count. Without file descriptors
 * for the largest level the line says "not run: ..." and the exit status is 0 (a limit of the
 * machine); bad usage exits 2.
 */

enum { MAX_LEVELS = 16, WARM_PAIRS = 100, WARM_GROUPS = 5 };

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(const char *why)
{
    fprintf(stderr,
            "epoll-ctl-pairs: %s (usage: epoll-ctl-pairs [--levels N,N,...] "
            "[--blocks B] [--seconds S] [--pairs P])\n",
            why);
    exit(2);
}

static long positive(const char *flag, const char *text, long max)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || end == text || v < 1 || v > max) {
        char why[128];
        snprintf(why, sizeof why, "%s wants a whole number from 1 to %ld, not '%s'", flag, max,
                 text);
        usage(why);
    }
    return v;
}

static int parse_levels(const char *text, long *levels)
{
    int n = 0;
    char buf[256];
    if (strlen(text) >= sizeof buf) usage("--levels is too long");
    strcpy(buf, text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == MAX_LEVELS) usage("--levels names more than 16 levels");
        levels[n] = positive("--levels", tok, 1000000);
        if (n && levels[n] <= levels[n - 1]) usage("--levels must rise");
        n++;
    }
    if (n < 2) usage("--levels wants at least two levels");
    return n;
}

/* Raises the soft RLIMIT_NOFILE toward the hard one; 0 when `need` fds fit. */
static int enough_fds(long need, char *why, size_t len)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        snprintf(why, len, "not run: getrlimit: %s", strerror(errno));
        return -1;
    }
    if (rl.rlim_cur < (rlim_t)need && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur >= (rlim_t)need) return 0;
    snprintf(why, len, "not run: RLIMIT_NOFILE %llu < %ld", (unsigned long long)rl.rlim_cur, need);
    return -1;
}

int main(int argc, char **argv)
{
    long levels[MAX_LEVELS] = {10, 100, 1000, 10000, 19000};
    int nlevels = 5;
    long pairs = 0, blocks = 100;
    double seconds = 1.0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) usage("every flag takes a value");
        if (!strcmp(argv[i], "--levels")) {
            nlevels = parse_levels(argv[++i], levels);
        } else if (!strcmp(argv[i], "--pairs")) {
            pairs = positive("--pairs", argv[++i], 1000000);
        } else if (!strcmp(argv[i], "--blocks")) {
            blocks = positive("--blocks", argv[++i], 100000);
        } else if (!strcmp(argv[i], "--seconds")) {
            char *end;
            seconds = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !(seconds > 0 && seconds <= 3600))
                usage("--seconds wants a number of seconds above 0, at most 3600");
        } else {
            char why[128];
            snprintf(why, sizeof why, "unknown flag '%s'", argv[i]);
            usage(why);
        }
    }

    long top = levels[nlevels - 1];
    char why[128];
    if (enough_fds(top + nlevels + 16, why, sizeof why) != 0) {
        printf("{\"status\":\"%s\"}\n", why);
        return 0;
    }
    int rc = 1;
    double *ns = NULL, warm[MAX_LEVELS], t_setup = cpu_ns();
    int *fds = calloc((size_t)top, sizeof *fds), ep[MAX_LEVELS];
    int probe = eventfd(0, EFD_CLOEXEC);
    long calls = 0;
    struct epoll_event ev = {.events = EPOLLIN};
    int ok = fds && probe >= 0;
    for (long i = 0; ok && i < top; i++)
        ok = (fds[i] = eventfd(0, EFD_CLOEXEC)) >= 0;
    for (int l = 0; ok && l < nlevels; l++) {
        ok = (ep[l] = epoll_create1(EPOLL_CLOEXEC)) >= 0;
        for (long i = 0; ok && i < levels[l]; i++, calls++)
            ok = epoll_ctl(ep[l], EPOLL_CTL_ADD, fds[i], &ev) == 0;
    }
    if (!ok) {
        fprintf(stderr, "epoll-ctl-pairs: setting up %ld registered fds: %s\n", top,
                strerror(errno));
        goto out;
    }
    double setup_ns = cpu_ns() - t_setup;

    ns = malloc(sizeof *ns * (size_t)nlevels * (size_t)blocks);
    if (!ns) {
        fprintf(stderr, "epoll-ctl-pairs: out of memory for %ld blocks\n", blocks);
        goto out;
    }
    /* Block -1 warms the probe's paths and every tree, and prices a pair on each level by the
     * median of its groups: one interrupt's work charged to this thread, or the first cold
     * pairs, would otherwise size every block several times too small. */
    double spent = 0;
    for (long b = -1; b < blocks; b++) {
        int groups = b < 0 ? WARM_GROUPS : 1;
        long n = b < 0 ? WARM_PAIRS / WARM_GROUPS : pairs;
        double *row = b < 0 ? warm : ns + b * nlevels;
        for (int k = 0; k < nlevels; k++) {
            int l = (int)((b + 1 + k) % nlevels);
            double group[WARM_GROUPS];
            for (int g = 0; g < groups; g++) {
                double t0 = cpu_ns();
                for (long i = 0; ok && i < n; i++, calls += 2)
                    ok = epoll_ctl(ep[l], EPOLL_CTL_ADD, probe, &ev) == 0 &&
                         epoll_ctl(ep[l], EPOLL_CTL_DEL, probe, NULL) == 0;
                group[g] = cpu_ns() - t0;
                if (!ok) {
                    fprintf(stderr, "epoll-ctl-pairs: epoll_ctl on %ld registered: %s\n", levels[l],
                            strerror(errno));
                    goto out;
                }
            }
            qsort(group, (size_t)groups, sizeof *group, by_value);
            row[l] = group[groups / 2] / (double)n;
            if (b >= 0) spent += group[0];
        }
        if (b < 0 && !pairs) {
            double block = 0;
            for (int l = 0; l < nlevels; l++)
                block += warm[l];
            pairs = (long)(seconds * 1e9 / ((double)blocks * block) + 0.5);
            pairs = pairs < 1 ? 1 : pairs > 1000000 ? 1000000 : pairs;
        }
    }

    printf("{\"status\":\"ok\",\"levels\":[");
    for (int l = 0; l < nlevels; l++)
        printf("%s%ld", l ? "," : "", levels[l]);
    printf("],\"warm_ns_per_pair\":[");
    for (int l = 0; l < nlevels; l++)
        printf("%s%.3f", l ? "," : "", warm[l]);
    printf("],\"pairs_per_block\":%ld,\"blocks\":%ld,\"setup_s\":%.4f,\"measured_s\":%.6f,"
           "\"epoll_ctl_calls\":%ld,\"ns_per_pair\":[",
           pairs, blocks, setup_ns / 1e9, spent / 1e9, calls);
    for (long b = 0; b < blocks; b++) {
        printf("%s[", b ? "," : "");
        for (int l = 0; l < nlevels; l++)
            printf("%s%.2f", l ? "," : "", ns[b * nlevels + l]);
        printf("]");
    }
    printf("]}\n");
    rc = 0;
out:
    free(ns);
    free(fds);
    return rc;
}
