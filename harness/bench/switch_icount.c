/* switch_icount.c - runs one benchmark loop a given number of times, for callgrind to count. */
#include "bench_build_info.h"
#include "bench_loops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(SWITCHYARD_HAVE_VALGRIND_H)
#include <valgrind/callgrind.h>
#endif

/*
 * usage: switch-icount ROW LOOPS
 *   call/noinline                        LOOPS calls
 *   switch/BACKEND                       LOOPS round trips (2 x LOOPS switches)
 *   create/BACKEND                       LOOPS create + enter + finish
 *   sched/star|ring/BACKEND/fibers:N     LOOPS rounds of N hops
 *   copystack/resume/bytes:B/fibers:F    about LOOPS resumes of F fibers sharing one copy
 *                                        stack, B live bytes each (asm; whole batches)
 * `switch-icount --list` prints the compiled-in backends, one per line; `--context` prints
 * the build (key: value lines) for the JSON's context block.
 * Prints one line: the row and how many units (calls, switches, creates, hops) it ran, so
 * that experiments/icount.py can divide the difference of two runs' instruction totals by the
 * difference of their units. Startup, set-up and teardown cancel out in that difference.
 *
 * usage: switch-icount --batch A B ROW...   (under callgrind --collect-atstart=no)
 * Every row in one process, for callgrind's start-up (half a second of a core) to be paid
 * once, not twice per row: each row runs A loops once uncounted (its first run pays the lazy
 * binding and the allocator's first growth, which a process of its own paid in both of its
 * runs), then A loops and B loops, each counted alone and dumped as a part of its own
 * (CALLGRIND_DUMP_STATS). The difference of the two parts is the same loop-body count as two
 * processes give. Three lines per row, one per run (warm-up, A, B), say the row and its units.
 */

static int usage(const char *why)
{
    fprintf(stderr,
            "switch-icount: %s\n"
            "usage: switch-icount call/noinline|switch/B|create/B|sched/star|ring/B/fibers:N"
            "|copystack/resume/bytes:B/fibers:F LOOPS (B: %s)\n",
            why, sw_backend_names());
    return 2;
}

static const sw_backend *backend_or_null(const char *name)
{
    const sw_backend *b = sw_backend_find(name);
    if (!b)
        fprintf(stderr, "switch-icount: unknown backend '%s' (valid: %s)\n", name,
                sw_backend_names());
    return b;
}

static bool count_down(void *arg)
{
    long *left = arg;
    return (*left)-- > 0;
}

static int run_sched(const char *rest, long loops)
{
    char policy_name[8], backend_name[32];
    long fibers;
    fb_policy policy;
    if (sscanf(rest, "%7[a-z]/%31[a-z-]/fibers:%ld", policy_name, backend_name, &fibers) != 3 ||
        fb_policy_parse(policy_name, &policy) != 0 || fibers < 2)
        return usage("bad sched row (want sched/star|ring/BACKEND/fibers:N, N >= 2)");
    const sw_backend *b = backend_or_null(backend_name);
    if (!b) return 2;
    long left = loops; /* more() is asked once per batch of one round each */
    bl_sched s = {.policy = policy,
                  .backend = b,
                  .fibers = fibers,
                  .stack_size = 16384,
                  .batch = 1,
                  .more = count_down,
                  .more_arg = &left};
    if (bl_sched_run(&s) != 0) {
        perror("switch-icount: sched");
        return 1;
    }
    printf("sched/%s/%s/fibers:%ld hops %llu switches %llu\n", policy_name, backend_name, fibers,
           (unsigned long long)(s.after.hops - s.before.hops),
           (unsigned long long)(s.after.switches - s.before.switches));
    return 0;
}

/* Copy-stack resumes as switch-bench's copystack/resume rows run them, on the asm backend:
 * more() is asked once per batch, so the units are counted from the runtime's own tally. */
static int run_copystack(const char *rest, long loops)
{
    long bytes, fibers;
    if (sscanf(rest, "bytes:%ld/fibers:%ld", &bytes, &fibers) != 2 || bytes < 0 || fibers < 1)
        return usage("bad copystack row (want copystack/resume/bytes:B/fibers:F)");
    const sw_backend *b = backend_or_null("asm");
    if (!b) return 2;
    bl_copystack c = {.backend = b, .fibers = fibers, .bytes = (size_t)bytes};
    c.batch = bl_copystack_batch(fibers);
    long batches = (loops + c.batch - 1) / c.batch;
    c.more = count_down;
    c.more_arg = &batches;
    if (bl_copystack_run(&c) != 0) {
        perror("switch-icount: copystack");
        return 1;
    }
    printf("copystack/resume/bytes:%ld/fibers:%ld resumes %llu\n", bytes, fibers,
           (unsigned long long)(c.after.stack_restores - c.before.stack_restores));
    return 0;
}

/* One run of a row: 0, or the exit status of a bad row or a failure. */
static int run_row(const char *row, long loops)
{
    if (strcmp(row, "call/noinline") == 0) {
        bl_call_loop(loops);
        printf("%s calls %ld\n", row, loops);
    } else if (strncmp(row, "switch/", 7) == 0) {
        bl_pair p;
        const sw_backend *b = backend_or_null(row + 7);
        if (!b) return 2;
        if (bl_pair_init(&p, b) != 0) return perror("switch-icount: switch"), 1;
        bl_pair_run(&p, loops);
        bl_pair_fini(&p);
        printf("%s switches %ld\n", row, 2 * loops);
    } else if (strncmp(row, "create/", 7) == 0) {
        bl_create c;
        const sw_backend *b = backend_or_null(row + 7);
        if (!b) return 2;
        if (bl_create_init(&c, b) != 0 || bl_create_run(&c, loops) != 0)
            return perror("switch-icount: create"), 1;
        bl_create_fini(&c);
        printf("%s creates %ld\n", row, c.entered);
    } else if (strncmp(row, "sched/", 6) == 0) {
        return run_sched(row + 6, loops);
    } else if (strncmp(row, "copystack/resume/", 17) == 0) {
        return run_copystack(row + 17, loops);
    } else {
        return usage("unknown row");
    }
    return 0;
}

static int parse_loops(const char *text, long *loops)
{
    char *end;
    errno = 0;
    *loops = strtol(text, &end, 10);
    return *end || end == text || errno || *loops < 0 ? -1 : 0;
}

#if defined(SWITCHYARD_HAVE_VALGRIND_H)
/* A counted run: collection on around the row alone (its line formatted inside, as a process
 * of its own formats it; written out after, uncounted), then a dump, so each part of the
 * output holds one run. */
static int counted(const char *row, long loops)
{
    CALLGRIND_TOGGLE_COLLECT;
    int rc = run_row(row, loops);
    CALLGRIND_TOGGLE_COLLECT;
    fflush(stdout);
    CALLGRIND_DUMP_STATS;
    return rc;
}

static int batch(int argc, char **argv)
{
    long a, b;
    if (argc < 5 || parse_loops(argv[2], &a) != 0 || parse_loops(argv[3], &b) != 0 || a >= b)
        return usage("--batch wants A < B (non-negative loop counts) and at least one row");
    if (!RUNNING_ON_VALGRIND) {
        fprintf(stderr, "switch-icount: --batch counts through callgrind's client requests: run "
                        "it under valgrind --tool=callgrind --collect-atstart=no\n");
        return 2;
    }
    for (int i = 4; i < argc; i++) {
        int rc = run_row(argv[i], a); /* the warm-up: its line says the row is known */
        fflush(stdout);
        if (rc == 0) rc = counted(argv[i], a);
        if (rc == 0) rc = counted(argv[i], b);
        if (rc != 0) return rc;
    }
    return 0;
}
#else
static int batch(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "switch-icount: --batch not built: it needs valgrind/callgrind.h\n");
    return 2;
}
#endif

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < sw_backend_count(); i++)
            printf("%s\n", sw_backend_at(i)->name);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--context") == 0) {
        printf("git_sha: %s\ncompiler: %s\nc_flags: %s\nswitch_backends: %s\n", SWITCHYARD_GIT_SHA,
               SWITCHYARD_C_COMPILER, SWITCHYARD_C_FLAGS, sw_backend_names());
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--batch") == 0) return batch(argc, argv);
    if (argc != 3) return usage("two arguments expected");
    long loops;
    if (parse_loops(argv[2], &loops) != 0) return usage("LOOPS must be a non-negative integer");
    return run_row(argv[1], loops);
}
