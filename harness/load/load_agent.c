/* echo-load --agent: one load host's share of a run coordinated over its ssh channel. Every
 * agent ramps up on its own, says "ready", and waits; the coordinator sends "start" to all of
 * them once all are ready, so their windows begin together, and one "stop" (or closing the
 * channel) ends them together. */
#define _GNU_SOURCE
#include "load.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One line from stdin, unbuffered so nothing past it is read: 1 when it is `want`, 0 for any
 * other line, -1 at the end of stdin (or an error). */
static int read_line_is(const char *want)
{
    char line[64];
    size_t n = 0;
    for (;;) {
        char ch;
        ssize_t k = read(0, &ch, 1);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        if (ch == '\n') break;
        if (n + 1 < sizeof(line)) line[n++] = ch;
    }
    while (n > 0 && line[n - 1] == '\r')
        n--;
    line[n] = 0;
    return strcmp(line, want) == 0;
}

static void *agent_main(void *arg)
{
    struct ld_sync *sy = arg;
    const struct timespec ms = {.tv_nsec = 1000000};
    while (!atomic_load(&sy->done_ns)) {
        if (atomic_load(&sy->stop)) return NULL; /* the run stopped in its ramp-up */
        nanosleep(&ms, NULL);
    }
    static const char ready[] = "ready\n";
    if (write(1, ready, sizeof(ready) - 1) != (ssize_t)sizeof(ready) - 1 ||
        read_line_is("start") != 1) {
        int none = 0;
        atomic_compare_exchange_strong(&sy->stop, &none, LD_STOP_NO_START);
        return NULL;
    }
    atomic_store(&sy->started_ns, ld_now_ns());
    (void)read_line_is("stop"); /* any line, or the end of stdin, is the stop */
    atomic_store(&sy->stop_ns, ld_now_ns());
    return NULL;
}

int ld_agent_start(struct ld_sync *sync)
{
    pthread_t t;
    sync->barrier = true;
    if (pthread_create(&t, NULL, agent_main, sync) != 0) return -1;
    pthread_detach(t);
    return 0;
}
