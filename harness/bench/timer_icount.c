/* timer_icount.c - runs one timers/ loop of switch-bench a given number of batches, counting
 * only the row's phase, for callgrind (experiments/icount.py --exe timer-icount). */
#include "bench_build_info.h"
#include "bench_timers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(SWITCHYARD_HAVE_VALGRIND_H)
#include <valgrind/callgrind.h>
#endif

/*
 * usage: timer-icount timers/cancelled|firing/arm|cancel|expire/STRUCTURE/pending:N BATCHES
 * Collection is switched off at the start of main and on only around the row's phase of each
 * batch (CALLGRIND_TOGGLE_COLLECT), so set-up, warm-up and the other two phases are not
 * counted; icount.py differences two batch counts as it does for switch-icount. Prints
 * "<row> arms|cancels|expires <ops>". `--list` prints every row (the sizes 10^2, 10^4, 10^6),
 * `--context` the build.
 */

static const long sizes[] = {100, 10000, 1000000};

static void toggle(void)
{
#if defined(SWITCHYARD_HAVE_VALGRIND_H)
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

static int usage(const char *why)
{
    fprintf(stderr,
            "timer-icount: %s\nusage: timer-icount timers/cancelled|firing/arm|cancel|expire/"
            "STRUCTURE/pending:N BATCHES (STRUCTURE: %s)\n",
            why, tm_names());
    return 2;
}

int main(int argc, char **argv)
{
    static const char *const units[BT_OPS] = {"arms", "cancels", "expires"};
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int w = 0; w < BT_WORKLOADS; w++)
            for (int op = 0; op < BT_OPS; op++)
                for (size_t i = 0; i < tm_count(); i++)
                    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
                        printf("timers/%s/%s/%s/pending:%ld\n", bt_workload_name((bt_workload)w),
                               bt_op_name((bt_op)op), tm_at(i)->name, sizes[k]);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--context") == 0) {
        printf("git_sha: %s\ncompiler: %s\nc_flags: %s\ntimers: %s\n", SWITCHYARD_GIT_SHA,
               SWITCHYARD_C_COMPILER, SWITCHYARD_C_FLAGS, tm_names());
        return 0;
    }
    if (argc != 3) return usage("two arguments expected");
#if !defined(SWITCHYARD_HAVE_VALGRIND_H)
    fprintf(stderr, "timer-icount: not run: built without valgrind/callgrind.h, so it cannot "
                    "count one phase apart from the others\n");
    return 1;
#endif
    toggle(); /* off: from here on only the phase counts */
    char workload[16], op[16], name[32], *end;
    long pending;
    bt_timers b = {0};
    if (sscanf(argv[1], "timers/%15[a-z]/%15[a-z]/%31[a-z0-9]/pending:%ld", workload, op, name,
               &pending) != 4 ||
        bt_workload_parse(workload, &b.workload) != 0 || bt_op_parse(op, &b.hook_op) != 0 ||
        pending < 2)
        return usage("bad row");
    b.ops = tm_find(name);
    if (!b.ops) return usage("unknown timer structure");
    long batches = strtol(argv[2], &end, 10);
    if (*end || batches < 0) return usage("BATCHES must be a non-negative integer");
    b.pending = (size_t)pending;
    b.hook = toggle;
    if (bt_timers_init(&b) != 0) return perror("timer-icount"), 1;
    for (long i = 0; i < batches; i++)
        bt_timers_batch(&b);
    printf("%s %s %llu\n", argv[1], units[b.hook_op], (unsigned long long)b.done[b.hook_op]);
    bt_timers_fini(&b);
    return 0;
}
