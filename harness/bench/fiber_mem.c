/* fiber_mem.c - memory per idle fiber (RSS, PSS, maps), guarded against copy stacks, as JSON. */
#define _GNU_SOURCE
#include "fiber.h"
#include "switch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * usage: fiber-mem --fibers N [--stack guarded|copy[:K]] [--switch NAME]
 *
 * Spawns N fibers that each touch a small frame (IDLE_FRAME bytes, about what a parked
 * connection's session keeps) and park, the way idle connections wait for input. Once all are
 * parked, the last fiber reads the process's resident memory (Rss and Pss from
 * /proc/self/smaps_rollup) and its mappings, then wakes everyone so the run ends cleanly. The
 * same is read before the first spawn; the difference divided by N is the memory per fiber.
 * Prints one JSON line. When the fibers cannot all be made (vm.max_map_count for guarded
 * stacks), the line has "status": "not run: ..." and the exit status is 0: a limit of the
 * machine, not a failure.
 */

enum { IDLE_FRAME = 128 };

struct mem {
    long rss_kb, pss_kb, maps;
};

static int read_mem(struct mem *m)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return -1;
    char line[256];
    m->rss_kb = m->pss_kb = -1;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "Rss: %ld kB", &m->rss_kb);
        sscanf(line, "Pss: %ld kB", &m->pss_kb);
    }
    fclose(f);
    f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    m->maps = 0;
    for (int c; (c = getc(f)) != EOF;)
        m->maps += c == '\n';
    fclose(f);
    return m->rss_kb >= 0 && m->pss_kb >= 0 ? 0 : -1;
}

static struct {
    long n;
    fiber **parked;
    long nparked;
    struct mem after;
    fb_stats stats;
    int mem_rc;
} g;

static void __attribute__((noinline)) idle_fiber(void *arg)
{
    (void)arg;
    volatile char frame[IDLE_FRAME];
    for (size_t i = 0; i < sizeof frame; i += 16)
        frame[i] = (char)i;
    g.parked[g.nparked++] = fb_self();
    fb_park();
    if (frame[16] != 16) abort(); /* a lost frame would show here */
}

static void measurer(void *arg)
{
    (void)arg;
    g.mem_rc = read_mem(&g.after);
    fb_get_stats(fb_current_runtime(), &g.stats);
    for (long i = 0; i < g.nparked; i++)
        fb_wake(g.parked[i]);
}

static int usage(const char *why)
{
    fprintf(stderr,
            "fiber-mem: %s\nusage: fiber-mem --fibers N [--stack guarded|copy[:K]] "
            "[--switch NAME]\n",
            why);
    return 2;
}

int main(int argc, char **argv)
{
    const char *stack = "guarded", *sw = NULL;
    long n = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--fibers") == 0) {
            char *end;
            n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 100000000) return usage("--fibers wants 1..10^8");
        } else if (i + 1 < argc && strcmp(argv[i], "--stack") == 0) {
            stack = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--switch") == 0) {
            sw = argv[++i];
        } else {
            return usage("unknown argument");
        }
    }
    if (n == 0) return usage("--fibers is required");
    fb_config cfg = {.policy = FB_STAR};
    if (fb_stack_mode_parse(stack, &cfg.stack_mode, &cfg.shared_stacks) != 0)
        return usage("--stack wants guarded, copy or copy:K");
    cfg.backend = sw ? sw_backend_find(sw) : sw_backend_at(0);
    if (!cfg.backend) {
        fprintf(stderr, "fiber-mem: unknown --switch '%s' (valid: %s)\n", sw, sw_backend_names());
        return 2;
    }
    g.n = n;
    g.parked = malloc((size_t)n * sizeof *g.parked);
    struct mem before;
    fb_runtime *rt = fb_runtime_new(&cfg);
    if (g.parked) memset(g.parked, 0, (size_t)n * sizeof *g.parked); /* counted in `before` */
    if (!g.parked || !rt || read_mem(&before) != 0) {
        fprintf(stderr, "fiber-mem: setting up: %s\n", strerror(errno));
        return 1;
    }
    printf("{\"stack\": \"%s\", \"switch\": \"%s\", \"fibers\": %ld, ", stack, cfg.backend->name,
           n);
    long made = 0;
    for (; made < n; made++)
        if (!fb_spawn(rt, idle_fiber, NULL)) break;
    if (made < n) {
        int err = errno;
        printf("\"status\": \"not run: fiber %ld of %ld could not be made (%s%s)\"}\n", made + 1, n,
               strerror(err),
               cfg.stack_mode == FB_STACK_GUARDED
                   ? "; each guarded stack costs 2 memory maps, vm.max_map_count bounds them"
                   : "");
        fb_runtime_free(rt);
        return 0;
    }
    if (!fb_spawn(rt, measurer, NULL) || fb_run(rt) != 0 || g.mem_rc != 0) {
        printf("\"status\": \"failed: %s\"}\n", strerror(errno));
        return 1;
    }
    double per = 1024.0 / (double)n;
    printf("\"status\": \"ok\", \"rss_kb_before\": %ld, \"rss_kb_after\": %ld, "
           "\"pss_kb_before\": %ld, \"pss_kb_after\": %ld, \"maps_before\": %ld, "
           "\"maps_after\": %ld, \"rss_bytes_per_fiber\": %.1f, \"pss_bytes_per_fiber\": %.1f, "
           "\"maps_per_fiber\": %.4f, \"save_bytes_per_fiber\": %.1f, \"shared_stacks\": %u}\n",
           before.rss_kb, g.after.rss_kb, before.pss_kb, g.after.pss_kb, before.maps, g.after.maps,
           (double)(g.after.rss_kb - before.rss_kb) * per,
           (double)(g.after.pss_kb - before.pss_kb) * per,
           (double)(g.after.maps - before.maps) / (double)n, (double)g.stats.save_bytes / (double)n,
           cfg.stack_mode == FB_STACK_COPY ? (cfg.shared_stacks ? cfg.shared_stacks : 1) : 0);
    fb_runtime_free(rt);
    free(g.parked);
    return 0;
}
