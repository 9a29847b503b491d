/* bench_loops.h - the timed loops shared by switch-bench (timing) and switch-icount (callgrind). */
#ifndef SWITCHYARD_BENCH_LOOPS_H
#define SWITCHYARD_BENCH_LOOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fiber.h"
#include "switch.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Both binaries run exactly these loops, so an instruction count and a time describe the
 * same code. Every loop calls a backend's jump function directly (never through the ops
 * table), except in ASan builds, where the checked sw_jump keeps ASan informed and the
 * numbers mean nothing.
 */

/* An empty function the compiler may not inline or drop: one call/noinline per round. The
 * calls are independent, so the core overlaps them: the row is a call's throughput. */
void bl_call_loop(long rounds);

/* call/chain: each call takes the previous one's result, so none starts before the one before
 * it has returned: the row is a call's latency (call, the callee's work of one add, return). */
long bl_call_chain(long rounds, long x);

/* ---- switch/<backend>: two contexts handing control back and forth ----------------------- */

typedef struct bl_pair {
    sw_ctx self, peer;
    sw_stack stack;
    const sw_backend *backend;
    void (*loop)(struct bl_pair *p, long round_trips);
    volatile bool stop;
} bl_pair;

/* Set up the pair and enter the peer once (so the timed loop only resumes). 0 or -1/errno. */
int bl_pair_init(bl_pair *p, const sw_backend *b);
/* round_trips x (self -> peer -> self): 2 x round_trips switches. */
static inline void bl_pair_run(bl_pair *p, long round_trips)
{
    p->loop(p, round_trips);
}
/* Let the peer's entry return (to self, by the link rule) and unmap its stack. */
void bl_pair_fini(bl_pair *p);

/* ---- switch/floor, switch/floor-fp, resume/floor-*: the reference rows, not backends ------ */

/*
 * The cheapest switch that keeps the six callee-saved registers (floor_x86_64_sysv_elf_gas.S):
 * pushes them on its own stack and resumes with an indirect jmp; floor-fp also keeps MXCSR and
 * the x87 control word. Not ABI-complete (no ASan or Valgrind annotations, no link rule) and
 * never used by fibers: it only shows, beside the backends, where the floor lies.
 */
/*
 * floor-ret is floor resuming with `ret` instead of popping the resume address and jumping to
 * it: the rows resume/floor-ret and resume/floor-jmp (= switch/floor) show what misleading the
 * return-stack predictor costs, since each `ret` returns into the other context's caller, not
 * to the caller of this call.
 */
typedef enum bl_floor_kind { BL_FLOOR, BL_FLOOR_FP, BL_FLOOR_RET } bl_floor_kind;

typedef struct bl_floor {
    void *self_sp, *peer_sp;
    sw_stack stack;
    bl_floor_kind kind;
    volatile bool stop;
} bl_floor;

/* 0, or -1/errno (ENOTSUP where there is no floor switch: not x86_64, or an ASan build). */
int bl_floor_init(bl_floor *f, bl_floor_kind kind);
/* round_trips x (self -> peer -> self): 2 x round_trips switches. */
void bl_floor_run(bl_floor *f, long round_trips);
void bl_floor_fini(bl_floor *f);

/* ---- create/<backend>: make a context on a reused stack, enter it, let it finish --------- */

typedef struct bl_create {
    sw_ctx self, ctx;
    sw_stack stack; /* mapped once and reused: the pooled stack a runtime would hand out */
    const sw_backend *backend;
    long entered;
} bl_create;

int bl_create_init(bl_create *c, const sw_backend *b);
/* Returns -1 if a context could not be made. */
int bl_create_run(bl_create *c, long rounds);
void bl_create_fini(bl_create *c);

/* ---- sched/<policy>/<backend>/fibers:N: N fibers yielding round-robin ------------------- */

/*
 * Fiber 0 (the driver) yields `batch` times per call of more(more_arg) until that returns
 * false; fibers 1..N-1 yield until the driver is done. Each driver yield is one round: every
 * fiber yields once, N hops. The stats snapshot brackets the rounds only (after one warm-up
 * round that lets every fiber touch its stack), so switches_per_hop describes the loop.
 */
typedef struct bl_sched {
    fb_policy policy;
    const sw_backend *backend;
    long fibers;
    size_t stack_size;
    long batch;               /* rounds per call of more() */
    fb_stack_mode stack_mode; /* guarded, or copy with shared_stacks stacks */
    unsigned shared_stacks;
    bool (*more)(void *more_arg); /* may be called on fiber 0's stack */
    void *more_arg;
    volatile bool stop;
    fb_stats before, after;
    long rounds; /* rounds run between the snapshots */
} bl_sched;

/* The rounds per more() that keep its cost per hop small: at least 256 hops per call. */
long bl_sched_batch(long fibers);
/* Spawn the fibers and run until more() says stop. Returns 0, or -1 with errno (a spawn
 * failed: ENOMEM/EAGAIN, e.g. vm.max_map_count). */
int bl_sched_run(bl_sched *s);
/* Whether s's fibers hop with fb_yield_inline (fiber_hop.h) rather than fb_yield: ring rows of the
 * compiler-assisted backends in guarded mode, outside ASan builds. Labels say so. */
bool bl_sched_hops_inline(const bl_sched *s);
double bl_sched_switches_per_hop(const bl_sched *s);
/* Whether `fibers` guarded stacks fit this process's memory-map limit (vm.max_map_count: two
 * maps per stack, plus room for the program's own). */
bool bl_guarded_fits(long fibers);

/* ---- copystack/resume/bytes:N/fibers:F: resumes of fibers on one shared stack -------------- */

/*
 * F fibers on one shared stack (copy mode, star policy), each keeping `bytes` of its own
 * locals live across its yields. The scheduler resumes them round-robin; one op is a resume
 * and the yield back, and every op saves one live part and restores one: with F >= 2 the
 * resumed fiber finds its predecessor's frames on the stack, with F = 1 the poller evicts the
 * fiber once per op (fb__evict_shared) so that it, too, is saved and restored every time.
 * The scheduler's poller hook drives the timing (more(), every `batch` ops) from the
 * scheduler context, off the shared stack. The stats snapshot brackets the measured ops only,
 * after a warm-up pass in which every fiber ran once.
 * With `guarded` set, the same loop runs on guarded stacks (one each, nothing moved; the
 * poller's eviction finds no shared stack): the yardstick the copy rows are judged against.
 */
typedef struct bl_copystack {
    const sw_backend *backend;
    long fibers;
    size_t bytes;
    bool guarded;
    long batch; /* ops per call of more(); a multiple of fibers */
    bool (*more)(void *more_arg);
    void *more_arg;
    volatile bool stop;
    fb_stats before, after;
    long ops; /* ops run between the snapshots */
    long polls, since_more;
} bl_copystack;

long bl_copystack_batch(long fibers);
/* 0, or -1 with errno (a spawn or the runtime failed; ENOTSUP: no copy stacks). */
int bl_copystack_run(bl_copystack *c);

#ifdef __cplusplus
}
#endif
#endif
