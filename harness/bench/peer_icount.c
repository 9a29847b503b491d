/* peer_icount.c - runs one peer/ loop a given number of times, for callgrind to count. */
#include "peer_loops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * usage: peer-icount ROW LOOPS, with ROW one of switch-bench's peer/ rows (peer_loops.h)
 *   peer/RUNTIME/ring/fibers:N      LOOPS rounds of N hops
 *   peer/RUNTIME/mutex/...          LOOPS batches of 16 pairs
 *   peer/RUNTIME/cond/...           LOOPS batches of 16 signals or hand-offs
 * Prints "<row> <unit> <count>", the line experiments/icount.py reads: the difference of two
 * runs' instruction totals over the difference of their units is the user-space cost of one
 * unit, start-up and set-up cancelling out. Callgrind sees no kernel instructions: a runtime
 * that enters the kernel per unit (Pth) costs more than its count says.
 * `peer-icount --list` prints the rows icount.py measures by default, one per line;
 * `--context` the runtimes built in and left out (key: value lines).
 */

static bool count_down(void *arg)
{
    long *left = arg;
    return (*left)-- > 0;
}

static int usage(const char *why)
{
    fprintf(stderr,
            "peer-icount: %s\nusage: peer-icount peer/RUNTIME/LOOP LOOPS | --list | "
            "--context\n",
            why);
    return 2;
}

/* The counted rows: a yield between two fibers, a hop in a ring of 16 (icount.py's sched
 * size), and the lock loops. */
static void list(void)
{
    static const peer_loop locks[] = {PEER_MUTEX_UNCONTENDED, PEER_MUTEX_CONTENDED,
                                      PEER_COND_UNCONTENDED, PEER_COND_CONTENDED};
    char name[96];
    for (size_t i = 0; i < peer_count(); i++) {
        const char *rt = peer_at(i)->name;
        for (long n = 2; n <= 16; n *= 8)
            if (peer_row_name(name, sizeof name, rt, PEER_RING, n) == 0) printf("%s\n", name);
        for (size_t j = 0; j < sizeof locks / sizeof locks[0]; j++)
            if (peer_row_name(name, sizeof name, rt, locks[j], 0) == 0) printf("%s\n", name);
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) return list(), 0;
    if (argc == 2 && strcmp(argv[1], "--context") == 0) {
        for (size_t i = 0; i < peer_count(); i++)
            printf("peer_%s: %s\n", peer_at(i)->name, peer_at(i)->what);
        printf("peers_not_built: %s\n", *peer_not_built() ? peer_not_built() : "none");
        return 0;
    }
    if (argc != 3) return usage("two arguments expected");
    char *end;
    errno = 0;
    long loops = strtol(argv[2], &end, 10);
    if (errno || *end || loops < 0) return usage("LOOPS must be a non-negative integer");
    const peer_runtime *rt;
    peer_run r = {.more = count_down};
    const char *why;
    if (peer_row_parse(argv[1], &rt, &r.loop, &r.fibers, &why) != 0) {
        fprintf(stderr, "peer-icount: %s: %s\n", argv[1], why);
        return 2;
    }
    r.batch = r.loop == PEER_RING ? r.fibers : 16;
    long left = loops;
    r.more_arg = &left;
    if (rt->run(&r) != 0) {
        fprintf(stderr, "peer-icount: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    printf("%s %s %llu\n", argv[1], peer_unit(r.loop), (unsigned long long)r.units);
    return 0;
}
