/* fiber.h - the fiber runtime's contract: scheduling (star or ring) with a pluggable poller. */
#ifndef SWITCHYARD_FIBER_H
#define SWITCHYARD_FIBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "switch.h"
#include "timer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One runtime per thread, single-threaded: every call below acts on the runtime of the
 * calling thread (fb_current_runtime()). Several threads may each run their own runtime.
 *
 * Fibers run in FIFO order: the run queue is intrusive (no allocation to enqueue), a yielding
 * fiber goes to its tail, a woken one too. Stacks are guarded (switch layer) and recycled
 * through a per-runtime free list, so spawning maps a new stack only when none is cached;
 * or, in copy mode, a few stacks are shared by all fibers (see fb_stack_mode).
 *
 * Scheduling policies:
 *   FB_STAR  every hop goes fiber -> scheduler context -> next fiber (two switches per hop),
 *            the libtask loop;
 *   FB_RING  a fiber that yields or parks switches straight to the next ready fiber (one
 *            switch per hop); the scheduler context runs only when nothing is ready, to poll.
 */
typedef enum fb_policy { FB_STAR, FB_RING } fb_policy;

/*
 * Stack modes:
 *   FB_STACK_GUARDED  every fiber has its own guarded stack (two memory maps each, so
 *                     vm.max_map_count bounds the fibers alive at once near 32K here);
 *   FB_STACK_COPY     the fibers share K guarded stacks (fiber i runs on stack i mod K).
 *                     When a fiber is to run on a stack that holds another fiber's frames,
 *                     that fiber's live part (its saved stack pointer up to the top) is first
 *                     copied out (into the fiber's record when it is at most 256 bytes, else
 *                     into a save buffer of its own, grown as needed), and the new fiber's
 *                     part copied back in; a fiber whose frames are still on its stack resumes
 *                     without any copy. The memory per fiber is its record and its live part.
 *                     Needs a backend with props.copy_stack (not setjmp). In ring mode a hop
 *                     between two fibers of one stack goes through the scheduler context (the
 *                     copy cannot run on the stack it overwrites): two switches instead of one.
 *
 * THE ALIASING HAZARD OF COPY MODE (libco's shared-stack caveat, seed 004). The fibers of one
 * shared stack run at the same addresses. A pointer to a fiber's stack local is valid only
 * while that fiber runs: once another fiber of the same stack has run, the address holds
 * that fiber's data, and the pointer reads and writes it silently. So in copy mode never hand
 * another fiber (or an IO wait that outlives a switch: a buffer read into by a poller, a
 * queue entry) the address of a stack variable; keep such data in memory of its own
 * (malloc, the fiber's argument). A guarded-mode program that passes stack addresses between
 * fibers is correct there and breaks in copy mode. The same goes for IO buffers with a
 * completion engine (io_uring): the kernel writes a read's buffer while the fiber is parked,
 * so in copy mode such a buffer must not be on the fiber's stack either (the IO layer keeps
 * its own records off the stack; the buffer is the caller's). engines/tests (case alias)
 * demonstrates both outcomes; the fiber echo server keeps its per-connection buffers on the heap.
 */
typedef enum fb_stack_mode { FB_STACK_GUARDED, FB_STACK_COPY } fb_stack_mode;

typedef struct fiber fiber;
typedef struct fb_runtime fb_runtime;

/*
 * The hook an event engine plugs into (engines/io.h provides one). The runtime calls
 * poll(state, timeout_ns) from its scheduler context:
 *   - with timeout_ns = 0 when fibers are runnable, at least once per pass over the run
 *     queue, so IO readiness is never starved by busy fibers;
 *   - with timeout_ns = -1 (block until an event) or the poller's own next deadline when no
 *     fiber is runnable.
 * poll wakes fibers with fb_wake and returns how many it woke, or -1 on a fatal error.
 * pending(state) tells whether any fiber still waits on the poller (IO or timer); when it is
 * zero and nothing is runnable, fb_run returns.
 * The runtime passes -1 when idle; a poller with timers shortens that to its own deadline.
 * With a poller, ring mode returns to the scheduler context once per pass to poll, so its
 * switches per hop are (N + 1) / N for N runnable fibers rather than exactly 1.
 */
typedef struct fb_poller {
    void *state;
    int (*poll)(void *state, int64_t timeout_ns);
    size_t (*pending)(void *state);
} fb_poller;

enum { FB_SHARED_STACKS_MAX = 1024 }; /* copy mode: the most shared stacks a runtime has */

typedef struct fb_config {
    const sw_backend *backend; /* switch backend (required) */
    fb_policy policy;
    size_t stack_size; /* usable bytes per fiber stack (copy mode: per shared stack);
                          0 = 64 KiB (copy mode: 256 KiB); at least SW_STACK_MIN */
    fb_poller poller;  /* poll == NULL: no IO, fb_run returns when no fiber is runnable */
    fb_stack_mode stack_mode;
    unsigned shared_stacks; /* copy mode: K shared stacks, 0 = 1 */
    const tm_ops *timers;   /* NULL = the default (heap) */
} fb_config;

typedef struct fb_stats {
    uint64_t switches; /* context switches performed (every sw jump, scheduler's included) */
    uint64_t hops;     /* times a fiber gave up the CPU to another fiber (yield or park) */
    uint64_t spawned, finished;
    uint64_t polls;                      /* calls of the poller */
    size_t live;                         /* fibers spawned and not yet finished */
    size_t stacks_mapped, stacks_cached; /* now: mapped (in use + cached), cached */
    uint64_t stack_maps;                 /* sw_stack_alloc calls over the runtime's life */
    /* Copy mode only (zero when guarded). */
    uint64_t stack_saves, stack_restores; /* live parts copied out, copied back in */
    uint64_t bytes_saved, bytes_restored; /* their bytes */
    uint64_t handoffs;                    /* ring hops routed through the scheduler */
    size_t save_bytes;                    /* now: bytes held in save buffers (live parts
                                             deeper than a record holds) */
} fb_stats;

/* Create the calling thread's runtime. Returns NULL with errno on failure: EINVAL for a bad
 * configuration, ENOTSUP for copy mode with a backend that cannot move stacks. */
fb_runtime *fb_runtime_new(const fb_config *cfg);
/* Free a runtime whose fb_run returned, with every stack and record; fibers that never
 * finished (parked forever, or never run) are discarded without being resumed. */
void fb_runtime_free(fb_runtime *rt);
fb_runtime *fb_current_runtime(void);
/* The timer structure the IO layer keeps for rt (fb_config.timers; the default when rt is NULL). */
const tm_ops *fb_runtime_timers(const fb_runtime *rt);

/* Create a fiber that runs fn(arg); it becomes runnable at once. NULL with errno on failure
 * (ENOMEM, or EAGAIN when vm.max_map_count or the stack mapping fails). The fiber's record
 * is reclaimed as soon as it finishes, so its handle is valid only until then (fb_join on it
 * must start before it finishes). */
fiber *fb_spawn(fb_runtime *rt, void (*fn)(void *arg), void *arg);
/* Like fb_spawn, but the record outlives the fiber until fb_join (or fb_runtime_free), so
 * joining a fiber that already finished is fine. Its stack is recycled when it finishes. */
fiber *fb_spawn_joinable(fb_runtime *rt, void (*fn)(void *arg), void *arg);
/* Run fibers until none is runnable and none waits on the poller. Returns 0; -1 when the
 * poller failed, -1/EDEADLK when fibers are still parked but nothing can wake them, -1/EINVAL
 * when called from a fiber or another thread. Call from the thread's own (non-fiber)
 * context; fibers spawned after it returned run at the next call. */
int fb_run(fb_runtime *rt);

/* Inside a fiber. */
fiber *fb_self(void);
void fb_yield(void);                          /* stay runnable, let others run first */
void fb_exit(void) __attribute__((noreturn)); /* finish the calling fiber now */
/* Wait for f to finish. A fiber may be joined at most once; fibers from fb_spawn that no one
 * joins are reclaimed when they finish. Returns 0, or -1/EINVAL when f is self or already
 * joined (or being joined). */
int fb_join(fiber *f);

/* For the IO layer: park the calling fiber until someone calls fb_wake on it. */
void fb_park(void);
/* Make a parked fiber runnable (appended to the run queue). Waking a runnable fiber is a
 * no-op. Callable from fibers and from the poller. */
void fb_wake(fiber *f);
/* fb_wake, leaving `value` for the woken fiber to read with fb_woken_with once it runs again
 * (fb_wake leaves 0). The value is kept in the line of the record that a resume reads anyway,
 * so a waiter learns how its wait ended without reading any other memory. */
void fb_wake_with(fiber *f, uint16_t value);
uint16_t fb_woken_with(const fiber *f);
/* A word the IO layer may use to remember what the fiber waits for. */
void **fb_wait_slot(fiber *f);
/* FB_WAIT_AREA bytes (16-byte aligned) in the fiber's record, for the IO layer's record of
 * what a parked fiber waits on: unlike the fiber's stack, it stays put while the fiber is
 * parked, in copy mode too. */
#define FB_WAIT_AREA 128
void *fb_wait_area(fiber *f);
/* The fiber whose wait area `area` is: fb_wait_area's inverse, computed without a load. */
fiber *fb_of_wait_area(void *area);
/* Whether [p, p + len) overlaps a shared stack of the calling thread's runtime (copy mode):
 * memory that holds another fiber's frames whenever the owner is evicted. */
bool fb_on_shared_stack(const void *p, size_t len);

void fb_get_stats(const fb_runtime *rt, fb_stats *out);
/* For benchmarks, from the scheduler context (a poller): copy every shared stack's live part
 * out now, as if another fiber needed the stack, so that the next resume restores it. No-op
 * in guarded mode. */
void fb__evict_shared(fb_runtime *rt);
/* For tests: the fiber copy mode prefetches when it claims a stack for f, the one claimed
 * FB__CLAIM_AHEAD claims after f's claim the last time round (NULL: none yet, or guarded). */
#define FB__CLAIM_AHEAD 16
fiber *fb__claim_ahead(const fiber *f);
/* For tests: copy mode's 2 MiB slabs of records, mapped from now on, are advised
 * MADV_NOHUGEPAGE instead of MADV_HUGEPAGE (records on 4 KiB pages, whatever THP allows). */
void fb__no_huge_records(bool on);
const char *fb_policy_name(fb_policy p);
const char *fb_stack_mode_name(fb_stack_mode m);
/* Parse "guarded", "copy" or "copy:K" (1 <= K <= FB_SHARED_STACKS_MAX); returns 0, or -1 for
 * anything else. */
int fb_stack_mode_parse(const char *text, fb_stack_mode *mode, unsigned *shared_stacks);
/* Parse "star" or "ring"; returns 0, or -1 for anything else. */
int fb_policy_parse(const char *name, fb_policy *out);

#ifdef __cplusplus
}
#endif
#endif
