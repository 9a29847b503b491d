/* peer_loops.c - the peer runtimes this build has, and the peer/ rows' names. */
#include "peer_loops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line per runtime; the build defines SWITCHYARD_HAVE_<X> when it found the library. */
static const peer_runtime peers[] = {
    {"switchyard", "this repository's fiber runtime (engines/fiber.h, engines/sync.h)",
     peer_switchyard_run, 0, NULL},
#ifdef SWITCHYARD_HAVE_BOOST_FIBER
    {"boost-fiber", "Boost.Fiber " SWITCHYARD_HAVE_BOOST_FIBER ", round_robin scheduler",
     peer_boost_fiber_run, 0, NULL},
#endif
#ifdef SWITCHYARD_HAVE_PTH
    {"pth", "GNU Pth " SWITCHYARD_HAVE_PTH ", its own scheduler", peer_pth_run, 256,
     "Pth's yield costs time linear in its number of threads (its ready queue is ordered by "
     "priority and walked), so a round of N hops costs O(N^2): its rings stop at 256"},
#endif
};

static const char *const left_out[] = {
#ifndef SWITCHYARD_HAVE_BOOST_FIBER
    "boost-fiber (not built: Boost.Fiber not found; Debian: libboost-fiber-dev)",
#endif
#ifndef SWITCHYARD_HAVE_PTH
    "pth (not built: GNU Pth not found; Debian: libpth-dev)",
#endif
    NULL};

const char *peer_not_built(void)
{
    static char text[256];
    if (!text[0])
        for (size_t i = 0; left_out[i]; i++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i ? "; " : "",
                     left_out[i]);
    return text;
}

size_t peer_count(void)
{
    return sizeof peers / sizeof peers[0];
}

const peer_runtime *peer_at(size_t i)
{
    return i < peer_count() ? &peers[i] : NULL;
}

const peer_runtime *peer_find(const char *name)
{
    for (size_t i = 0; i < peer_count(); i++)
        if (strcmp(peers[i].name, name) == 0) return &peers[i];
    return NULL;
}

const long peer_ring_fibers[] = {2, 16, 256, 4096, 16384, 0};

static const struct {
    const char *name, *unit;
} loops[] = {
    [PEER_RING] = {"ring", "hops"},
    [PEER_MUTEX_UNCONTENDED] = {"mutex/uncontended", "pairs"},
    [PEER_MUTEX_CONTENDED] = {"mutex/contended/fibers:2", "pairs"},
    [PEER_COND_UNCONTENDED] = {"cond/uncontended", "signals"},
    [PEER_COND_CONTENDED] = {"cond/contended/fibers:2", "handoffs"},
};
#define NLOOPS (sizeof loops / sizeof loops[0])

const char *peer_loop_name(peer_loop loop)
{
    return loops[loop].name;
}

const char *peer_unit(peer_loop loop)
{
    return loops[loop].unit;
}

int peer_row_name(char *buf, size_t size, const char *runtime, peer_loop loop, long fibers)
{
    int n = loop == PEER_RING ? snprintf(buf, size, "peer/%s/ring/fibers:%ld", runtime, fibers)
                              : snprintf(buf, size, "peer/%s/%s", runtime, loops[loop].name);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

int peer_row_parse(const char *row, const peer_runtime **rt, peer_loop *loop, long *fibers,
                   const char **why)
{
    char name[32];
    int used = 0;
    if (sscanf(row, "peer/%31[a-z-]/%n", name, &used) != 1 || used == 0) {
        *why = "not a peer/<runtime>/<loop> row";
        return -1;
    }
    if (!(*rt = peer_find(name))) {
        *why = "unknown or not built runtime";
        return -1;
    }
    const char *rest = row + used;
    char *end;
    if (strncmp(rest, "ring/fibers:", 12) == 0) {
        errno = 0;
        *fibers = strtol(rest + 12, &end, 10);
        if (errno || *end || *fibers < 2) {
            *why = "ring/fibers:N wants N >= 2";
            return -1;
        }
        *loop = PEER_RING;
        return 0;
    }
    for (size_t i = 1; i < NLOOPS; i++)
        if (strcmp(rest, loops[i].name) == 0) {
            *loop = (peer_loop)i;
            *fibers = i == PEER_MUTEX_CONTENDED || i == PEER_COND_CONTENDED ? 2 : 1;
            return 0;
        }
    *why = "unknown loop (ring/fibers:N, mutex/uncontended, mutex/contended/fibers:2, "
           "cond/uncontended, cond/contended/fibers:2)";
    return -1;
}

long peer_batch(peer_loop loop, long fibers)
{
    if (loop != PEER_RING) return 256;
    return fibers >= 256 ? fibers : fibers * ((256 + fibers - 1) / fibers);
}
