/* peer_loops.h - switch-bench's peer/ rows: the same scheduler and lock loops on our fiber
 * runtime and on the runtimes a reader might pick instead (Boost.Fiber, GNU Pth). */
#ifndef SWITCHYARD_PEER_LOOPS_H
#define SWITCHYARD_PEER_LOOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Rows are named peer/<runtime>/<loop>, the same <loop> for every runtime, so that a row of
 * ours and its peer differ only in <runtime> (switchyard, boost-fiber, pth):
 *   ring/fibers:N              N fibers (Pth: threads) yield in turn; one unit is one hop,
 *                              i.e. one yield that hands the CPU to the next fiber of the
 *                              ring. fibers:2 is a yield between two fibers.
 *   mutex/uncontended          one lock/unlock pair that nobody else wants
 *   mutex/contended/fibers:2   one lock/unlock pair by either of two fibers that both lock,
 *                              yield once holding the lock, and unlock, in a loop: the other
 *                              one always wants the lock (sync/fiber_mutex/contended/fibers:2
 *                              counts the first fiber's pairs only: twice this unit where
 *                              the two alternate). The row reports the second fiber's share
 *                              of the pairs: 0.5 where ownership is handed to the waiter, near
 *                              0 where the unlocker takes the lock straight back (barging)
 *   cond/uncontended           one signal (notify one) of a condition nobody waits on
 *   cond/contended/fibers:2    one hand-off of a turn between two fibers through one mutex and
 *                              one condition variable: the signal, and the waiter's wake-up
 *                              and relock (a round trip is two units)
 * Every fiber has a stack of PEER_STACK usable bytes. Our ring row is the loop of
 * sched/ring/<backend> (bench_loops.c) on the runtime's default backend, guarded stacks where
 * they fit vm.max_map_count, otherwise copy mode (the runner's note says which).
 */
typedef enum peer_loop {
    PEER_RING,
    PEER_MUTEX_UNCONTENDED,
    PEER_MUTEX_CONTENDED,
    PEER_COND_UNCONTENDED,
    PEER_COND_CONTENDED,
} peer_loop;

#define PEER_STACK (16 * 1024)

typedef struct peer_run {
    peer_loop loop;
    long fibers; /* ring: N >= 2; the other loops set it themselves (1 or 2) */
    long batch;  /* units per call of more() (ring: a multiple of fibers) */
    /* Called on the measuring fiber's stack, before each batch; false ends the run. */
    bool (*more)(void *more_arg);
    void *more_arg;
    uint64_t units;   /* units done between the first more() and the last */
    uint64_t partner; /* mutex/contended: the second fiber's part of units */
    const char *note; /* set by the runner: how it ran, e.g. the stack mode */
} peer_run;

typedef struct peer_runtime {
    const char *name;        /* <runtime> of the rows */
    const char *what;        /* the library and version it was built against */
    int (*run)(peer_run *r); /* 0, or -1 with errno */
    long max_ring;           /* the largest ring it runs (0: every N), and why */
    const char *why_max;
} peer_runtime;

/* The runtimes this build has, ours first. */
size_t peer_count(void);
const peer_runtime *peer_at(size_t i);
const peer_runtime *peer_find(const char *name);
/* The runtimes this build left out, "name (why); ..." or "" (for listings). */
const char *peer_not_built(void);

/* The N of the ring rows, a zero-terminated list, and the loops' names ("ring", ...). */
extern const long peer_ring_fibers[];
const char *peer_loop_name(peer_loop loop); /* "mutex/uncontended", ...; ring: "ring" */
/* The row's unit in the plural ("hops", "pairs", "signals", "handoffs"). */
const char *peer_unit(peer_loop loop);
/* "peer/<runtime>/<loop>" into buf; 0, or -1 when it does not fit. */
int peer_row_name(char *buf, size_t size, const char *runtime, peer_loop loop, long fibers);
/* Parses a row name; 0, or -1 with a one-line reason in *why. */
int peer_row_parse(const char *row, const peer_runtime **rt, peer_loop *loop, long *fibers,
                   const char **why);
/* A batch that keeps more()'s own cost small: at least 256 units, whole rounds for a ring. */
long peer_batch(peer_loop loop, long fibers);

int peer_switchyard_run(peer_run *r);
int peer_boost_fiber_run(peer_run *r);
int peer_pth_run(peer_run *r);

#ifdef __cplusplus
}
#endif
#endif
