/* peer_aco.c - peer-aco: libaco's switch and copy-stack resume, timed the way switch-bench
 * times ours, so harness/tools/aco_side.py can put the two side by side.
 *
 * libaco is not in Debian and its sources are not part of this repository: the program is
 * built only when CMake is given -DSWITCHYARD_LIBACO_DIR=<a libaco checkout> (aco.c, aco.h,
 * acosw.S), compiled with the same -O2 as the rest of the tree (libaco's own make.sh uses
 * -O2 too). It speaks the part of Google Benchmark's command line and JSON that
 * gate/regress_paired.one_process uses, so one reader serves both programs.
 *
 * Rows (CPU time of this thread, per unit):
 *   aco/acosw                          one switch: main and one coroutine call acosw on each
 *                                      other directly (2 switches a round trip), the figure
 *                                      beside switch/<backend>
 *   aco/resume/standalone/fibers:N     one aco_resume and the coroutine's aco_yield, N
 *                                      coroutines each on its own share stack (nothing is
 *                                      copied): libaco's hop through its main coroutine,
 *                                      beside sched/star/<backend>/fibers:N
 *   aco/resume/bytes:B/fibers:N        the same with N coroutines on ONE share stack, each
 *                                      keeping B live bytes in its frame: every resume saves
 *                                      the previous owner's stack and restores its own, the
 *                                      figure beside copystack/resume/bytes:B/fibers:N
 * The first pass over the coroutines is not timed (each enters its function once), as the
 * first pass of switch-bench's copystack rows is not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aco.h"

#define MAX_ROWS 16
#define CHUNK    4096 /* units between two reads of the clock */

typedef enum { ROW_ACOSW, ROW_STANDALONE, ROW_COPY } row_kind;

typedef struct row {
    char name[64];
    row_kind kind;
    long fibers;
    size_t bytes;
} row;

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- aco/acosw: main and one coroutine switch to each other directly ---------------------- */

static aco_t *g_main, *g_peer;

static void acosw_peer(void)
{
    for (;;)
        acosw(g_peer, g_main);
}

/* ns per switch over at least min_ns of CPU time; *units: switches. */
static double time_acosw(double min_ns, double *units)
{
    aco_share_stack_t *ss = aco_share_stack_new(0);
    g_main = aco_create(NULL, NULL, 0, NULL, NULL);
    g_peer = aco_create(g_main, ss, 0, acosw_peer, NULL);
    acosw(g_main, g_peer); /* the peer enters its loop and comes straight back */
    double start = thread_cpu_ns(), now = start;
    long rounds = 0;
    while (now - start < min_ns) {
        for (int i = 0; i < CHUNK; i++)
            acosw(g_main, g_peer);
        rounds += CHUNK;
        now = thread_cpu_ns();
    }
    /* The peer never returns: it is left parked in acosw and its memory freed with it. */
    aco_destroy(g_peer);
    aco_share_stack_destroy(ss);
    aco_destroy(g_main);
    *units = 2.0 * (double)rounds;
    return (now - start) / *units;
}

/* ---- aco/resume/...: main resumes N coroutines in turn ------------------------------------ */

static volatile bool g_stop;
static size_t g_bytes;

static void resume_worker(void)
{
    /* The B live bytes: in this frame, written once, checked after the last yield. */
    volatile char *live = __builtin_alloca(g_bytes ? g_bytes : 1);
    for (size_t i = 0; i < g_bytes; i++)
        live[i] = (char)i;
    while (!g_stop)
        aco_yield();
    if (g_bytes && live[g_bytes - 1] != (char)(g_bytes - 1)) abort(); /* lost in a copy */
    aco_exit();
}

/* ns per resume (with its yield); -1 with errno when memory runs out. */
static double time_resume(const row *r, double min_ns, double *units)
{
    long n = r->fibers;
    bool shared = r->kind == ROW_COPY;
    aco_t **cos = calloc((size_t)n, sizeof *cos);
    aco_share_stack_t **stacks = calloc(shared ? 1 : (size_t)n, sizeof *stacks);
    if (!cos || !stacks) {
        free(cos);
        free(stacks);
        errno = ENOMEM;
        return -1;
    }
    g_stop = false;
    g_bytes = r->bytes;
    aco_t *main_co = aco_create(NULL, NULL, 0, NULL, NULL);
    /* 64 KiB share stacks: the live part is small, and N of libaco's 2 MiB default would
     * not fit in memory for N standalone coroutines. */
    for (long i = 0; i < (shared ? 1 : n); i++)
        stacks[i] = aco_share_stack_new(64 * 1024);
    for (long i = 0; i < n; i++)
        cos[i] = aco_create(main_co, stacks[shared ? 0 : i], 0, resume_worker, NULL);
    for (long i = 0; i < n; i++)
        aco_resume(cos[i]);                   /* the untimed first pass */
    long passes = n >= CHUNK ? 1 : CHUNK / n; /* whole passes between two clock reads */
    double start = thread_cpu_ns(), now = start;
    long resumes = 0;
    while (now - start < min_ns) {
        for (long p = 0; p < passes; p++)
            for (long i = 0; i < n; i++)
                aco_resume(cos[i]);
        resumes += passes * n;
        now = thread_cpu_ns();
    }
    g_stop = true;
    for (long i = 0; i < n; i++) {
        aco_resume(cos[i]); /* runs to aco_exit */
        if (!cos[i]->is_end) abort();
        aco_destroy(cos[i]);
    }
    for (long i = 0; i < (shared ? 1 : n); i++)
        aco_share_stack_destroy(stacks[i]);
    aco_destroy(main_co);
    free(cos);
    free(stacks);
    *units = (double)resumes;
    return (now - start) / *units;
}

/* ---- rows and the command line ------------------------------------------------------------ */

static int rows_all(row *rows)
{
    static const long copy_fibers[] = {100000};
    static const size_t copy_bytes[] = {8, 64, 512};
    int n = 0;
    rows[n++] = (row){"aco/acosw", ROW_ACOSW, 1, 0};
    rows[n] = (row){"", ROW_STANDALONE, 16, 0};
    snprintf(rows[n].name, sizeof rows[n].name, "aco/resume/standalone/fibers:%ld", rows[n].fibers);
    n++;
    for (size_t f = 0; f < sizeof copy_fibers / sizeof *copy_fibers; f++)
        for (size_t b = 0; b < sizeof copy_bytes / sizeof *copy_bytes; b++) {
            rows[n] = (row){"", ROW_COPY, copy_fibers[f], copy_bytes[b]};
            snprintf(rows[n].name, sizeof rows[n].name, "aco/resume/bytes:%zu/fibers:%ld",
                     rows[n].bytes, rows[n].fibers);
            n++;
        }
    return n;
}

static const char *flag_value(const char *arg, const char *flag)
{
    size_t n = strlen(flag);
    return strncmp(arg, flag, n) == 0 && arg[n] == '=' ? arg + n + 1 : NULL;
}

static void usage_error(const char *what)
{
    fprintf(stderr,
            "peer-aco: %s (flags: --benchmark_filter=REGEX "
            "--benchmark_repetitions=N --benchmark_min_time=SECONDS "
            "--benchmark_format=json --benchmark_enable_random_interleaving=BOOL "
            "--benchmark_list_tests=true)\n",
            what);
    exit(2);
}

static void thp_mode(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return;
    char line[128];
    if (fgets(line, sizeof line, f)) {
        char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
        if (open && close) snprintf(buf, size, "%.*s", (int)(close - open - 1), open + 1);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *filter = ".";
    long repetitions = 1;
    double min_time = 0.5;
    bool shuffle = false, list = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        char *end;
        if ((v = flag_value(argv[i], "--benchmark_filter"))) {
            filter = v;
        } else if ((v = flag_value(argv[i], "--benchmark_repetitions"))) {
            repetitions = strtol(v, &end, 10);
            if (*end || repetitions < 1 || repetitions > 1000)
                usage_error("--benchmark_repetitions takes a whole number from 1 to 1000");
        } else if ((v = flag_value(argv[i], "--benchmark_min_time"))) {
            min_time = strtod(v, &end);
            if ((*end && strcmp(end, "s") != 0) || !(min_time > 0 && min_time <= 60))
                usage_error("--benchmark_min_time takes seconds, above 0 and at most 60");
        } else if ((v = flag_value(argv[i], "--benchmark_format"))) {
            if (strcmp(v, "json") != 0) usage_error("--benchmark_format: only json is written");
        } else if ((v = flag_value(argv[i], "--benchmark_enable_random_interleaving"))) {
            shuffle = strcmp(v, "true") == 0;
        } else if ((v = flag_value(argv[i], "--benchmark_list_tests"))) {
            list = strcmp(v, "true") == 0;
        } else {
            char what[160];
            snprintf(what, sizeof what, "unknown argument '%.100s'", argv[i]);
            usage_error(what);
        }
    }
    regex_t re;
    if (regcomp(&re, filter, REG_EXTENDED | REG_NOSUB) != 0)
        usage_error("--benchmark_filter is not a valid extended regular expression");
    row all[MAX_ROWS], *picked[MAX_ROWS];
    int n_all = rows_all(all), n = 0;
    for (int i = 0; i < n_all; i++)
        if (regexec(&re, all[i].name, 0, NULL, 0) == 0) picked[n++] = &all[i];
    regfree(&re);
    if (list) {
        for (int i = 0; i < n; i++)
            printf("%s\n", picked[i]->name);
        return 0;
    }
    if (n == 0) {
        fprintf(stderr, "peer-aco: no row matches --benchmark_filter=%s\n", filter);
        return 2;
    }
    aco_thread_init(NULL);
    char thp[32];
    thp_mode(thp, sizeof thp);
    printf("{\"context\": {\"program\": \"peer-aco\", \"libaco\": \"%d.%d.%d\", "
           "\"thp\": \"%s\", \"clock\": \"CLOCK_THREAD_CPUTIME_ID\"},\n \"benchmarks\": [",
           ACO_VERSION_MAJOR, ACO_VERSION_MINOR, ACO_VERSION_PATCH, thp);
    srand((unsigned)time(NULL));
    const char *sep = "";
    for (long rep = 0; rep < repetitions; rep++) {
        if (shuffle)
            for (int i = n - 1; i > 0; i--) {
                int j = rand() % (i + 1);
                row *t = picked[i];
                picked[i] = picked[j];
                picked[j] = t;
            }
        for (int i = 0; i < n; i++) {
            const row *r = picked[i];
            double units = 0, ns;
            if (r->kind == ROW_ACOSW)
                ns = time_acosw(min_time * 1e9, &units);
            else
                ns = time_resume(r, min_time * 1e9, &units);
            if (ns < 0) {
                printf("%s\n  {\"run_name\": \"%s\", \"run_type\": \"iteration\", "
                       "\"error_occurred\": true, \"error_message\": \"not run: %s\"}",
                       sep, r->name, strerror(errno));
            } else {
                printf("%s\n  {\"name\": \"%s\", \"run_name\": \"%s\", "
                       "\"run_type\": \"iteration\", \"repetition_index\": %ld, "
                       "\"iterations\": %.0f, \"cpu_time\": %.4f, \"time_unit\": \"ns\"}",
                       sep, r->name, r->name, rep, units, ns);
            }
            sep = ",";
            fflush(stdout);
        }
    }
    printf("\n]}\n");
    return 0;
}
