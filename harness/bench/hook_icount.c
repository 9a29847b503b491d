/* hook_icount.c - runs one hook/ or sync/ loop a given number of times, for callgrind to count. */
#include "bench_hook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * usage: hook-icount ROW LOOPS, with ROW one of switch-bench's rows
 *   hook/read|write/pipe/syscall|fallthrough|direct|hooked     LOOPS calls
 *   sync/fiber_mutex|event_lock|pthread_mutex/uncontended      LOOPS lock/unlock pairs
 * Prints "<row> calls <n>" (or "pairs"), the shape experiments/icount.py reads: the difference
 * of two runs' instruction totals over the difference of their units is the user-space
 * cost of one call, start-up and set-up cancelling out. Callgrind sees no kernel
 * instructions, so for hook/ rows this is exactly the path the hooks add or save.
 */

#define BATCH 64

static bool count_down(void *arg)
{
    long *left = arg;
    return (*left)-- > 0;
}

static int usage(const char *why)
{
    fprintf(stderr,
            "hook-icount: %s\nusage: hook-icount hook/read|write/pipe/"
            "syscall|fallthrough|direct|hooked | sync/fiber_mutex|event_lock|pthread_mutex/"
            "uncontended LOOPS\n",
            why);
    return 2;
}

int main(int argc, char **argv)
{
    static const char *hows[] = {"syscall", "fallthrough", "direct", "hooked"};
    static const char *locks[] = {"fiber_mutex", "event_lock", "pthread_mutex"};
    if (argc != 3) return usage("two arguments expected");
    char *end;
    long loops = strtol(argv[2], &end, 10);
    if (*end || loops < 0 || loops % BATCH) return usage("LOOPS must be a multiple of 64");
    long left = loops / BATCH;
    const char *row = argv[1];
    char call[8], how[16], lock[16];
    if (sscanf(row, "hook/%7[a-z]/pipe/%15[a-z]", call, how) == 2) {
        bh_io b = {.batch = BATCH, .more = count_down, .more_arg = &left};
        if (strcmp(call, "read") && strcmp(call, "write")) return usage("unknown call");
        b.call = strcmp(call, "read") == 0 ? BH_READ : BH_WRITE;
        size_t i = 0;
        while (i < 4 && strcmp(how, hows[i]))
            i++;
        if (i == 4) return usage("unknown variant");
        b.how = (bh_how)i;
        if (bh_io_run(&b) != 0) return perror("hook-icount"), 1;
        printf("%s calls %llu\n", row, (unsigned long long)b.calls);
        return 0;
    }
    if (sscanf(row, "sync/%15[a-z_]/uncontended", lock) == 1) {
        bs_sync s = {.mode = BS_UNCONTENDED, .batch = BATCH, .more = count_down, .more_arg = &left};
        size_t i = 0;
        while (i < 3 && strcmp(lock, locks[i]))
            i++;
        if (i == 3) return usage("unknown lock");
        s.lock = (bs_lock)i;
        if (bs_sync_run(&s) != 0) return perror("hook-icount"), 1;
        printf("%s pairs %llu\n", row, (unsigned long long)s.pairs);
        return 0;
    }
    return usage("unknown row");
}
