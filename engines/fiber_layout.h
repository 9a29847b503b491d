/* fiber_layout.h - the fiber runtime's private record and runtime layouts, where each field
 * sits and which cache lines a hop or a copy-stack resume reads. Included by fiber.c and by
 * fiber_hop.h (the ring hop inline in its callers). */
#ifndef SWITCHYARD_FIBER_LAYOUT_H
#define SWITCHYARD_FIBER_LAYOUT_H

#include "fiber.h"
#include "fiber_record_slab.h"
#include "fiber_stack_pool.h"
#include "switch_backends.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Records come from slabs (fiber_record_slab.h); copy mode keeps the first SAVE_INLINE bytes
 * of an evicted fiber's live part inside its record (see struct fiber). */
enum { LINE = 64, SAVE_INLINE = 256 };

/* How many claims ahead copy mode fetches a record (see prefetch_ahead in fiber.c). */
enum { CLAIM_AHEAD = FB__CLAIM_AHEAD };

/* A fiber is RUNNABLE while queued or running, PARKED while it waits for fb_wake, DONE once
 * its function returned (or it called fb_exit). Running needs no state of its own. */
enum fb_state { FB_RUNNABLE, FB_PARKED, FB_DONE };

/* A shared stack of copy mode, and the fiber whose frames it holds now (NULL: nobody's). */
typedef struct shared_stack {
    sw_stack stack;
    fiber *owner;
} shared_stack;

/*
 * The record. Its sw_ctx comes last and is allocated only as large as the backend needs
 * (sw_ctx_size: 72 bytes of header plus 64 for asm, 936 more for ucontext), so that an idle
 * fiber in copy mode costs a few hundred bytes.
 *
 * What a resume reads is packed into as few cache lines as it can be, because with many
 * fibers each of those lines is a miss: records come from slabs, placed so that the backend's
 * saved registers (ctx.priv) start a cache line; the fields a hop or a wake touches sit in the
 * line before the context header, together with ctx.sp (on x86_64 the struct below puts them
 * exactly there, so the hot line is save_buf..ctx.sp and the register line follows the header's
 * one). In copy mode the record goes on with an inline save area of SAVE_INLINE bytes, line
 * aligned, right after the context: an evicted live part that fits is copied there, a deeper
 * one into a buffer of its own. A resume at 8 live bytes (128 moved) then reads
 * the hot line, the register line and two lines of save area, all within one record, and
 * records are laid out in creation order, which is the order a round-robin visits them.
 */
struct fiber {
    _Alignas(16) unsigned char wait_area[FB_WAIT_AREA]; /* fb_wait_area */
    void (*fn)(void *);
    void *arg;
    void *wait_slot;
    fiber *joiner;              /* the fiber parked in fb_join on this one */
    fiber *prev_all, *next_all; /* every record the runtime owns, for fb_runtime_free */
    sw_stack stack;             /* guarded mode */
    uint32_t save_cap;          /* the bytes of save_buf */
    bool joinable, joined;
    /* The hot line, up to and including ctx.sp. It starts 16-aligned so that ctx.priv can be
     * placed at the start of a line (see the assertions below). */
    _Alignas(16) char *save_buf; /* copy mode: a live part too deep for the inline save area */
    fiber *ahead;     /* copy mode: the fiber claimed CLAIM_AHEAD claims after this one, the
                         last time this one was claimed (a guess for prefetches: may be stale) */
    fiber *next;      /* run queue, or the runtime's free list of records */
    shared_stack *ss; /* copy mode: the stack this fiber runs on; NULL when guarded */
    fb_runtime *rt;
    const char *resume_at; /* fb_park's frame: where the fiber's stack is touched first on resume */
    uint32_t save_len;     /* copy mode, while evicted: the live part is the top save_len bytes */
    uint8_t state;         /* enum fb_state */
    bool unmade;           /* copy mode: ctx is made on the shared stack when first restored */
    uint16_t woken_with;   /* fb_wake_with's value, read by the fiber once it runs again */
    sw_ctx ctx;            /* last but for the save area: sw_ctx_size(backend) bytes of it */
};

/* The shift of fb_runtime_new can put ctx.priv at the start of a line, and on x86_64 the hot
 * fields and ctx.sp then fill the line before the header's. (On aarch64, sw_ctx is 16-aligned
 * for its ucontext and its header 80 bytes: that line holds the hot fields from `next` on, and
 * save_buf and ahead end the line before it.) */
#if defined(__x86_64__)
_Static_assert(offsetof(fiber, ctx) + sizeof(void *) - offsetof(fiber, save_buf) <= LINE,
               "the hot fields outgrew their line");
#endif
_Static_assert((offsetof(fiber, ctx) + offsetof(sw_ctx, priv)) % _Alignof(fiber) == 0,
               "ctx.priv cannot start a line");

struct fb_runtime {
    /* The hot fields first: a hop touches only these and the two fibers' records. */
    fiber *current; /* the running fiber; NULL while the scheduler context runs */
    fiber *head, *tail;
    size_t runnable;            /* fibers in the run queue */
    int64_t pass_left;          /* hops until the scheduler polls again (see fb_run) */
    enum sw_kind kind;          /* which backend's jump switch_to calls directly; SW_KIND_HOOK in
                                   copy mode, where `dispatch` is the copy-stack hook */
    const sw_backend *dispatch; /* what the jump site calls for SW_KIND_HOOK (or TABLE) */
    enum sw_kind jump_kind;     /* the backend's own kind, which the copy-stack hook uses */
    fb_policy policy;
    fb_stats stats;
    sw_ctx sched; /* the thread's own context, where fb_run's loop runs */
    const sw_backend *backend;
    fb_poller poller;
    fb__pool pool;
    fiber *free_records;
    fiber *all;
    fb__slabs records;    /* strides of whole lines, shifted so that ctx.priv starts a line */
    size_t save_inline;   /* offset of the inline save area in a record; 0 when guarded */
    shared_stack *shared; /* copy mode: `nshared` stacks; NULL when guarded */
    unsigned nshared;
    fb_stack_mode stack_mode;
    bool tools_watch;          /* ASan build or under memcheck: copy with sw_stack_copy */
    fiber *trail[CLAIM_AHEAD]; /* copy mode: the fibers of the last claims, oldest at trail_at */
    unsigned trail_at;
    const tm_ops *timers; /* for the IO layer: fb_config.timers, or the default */
};

/*
 * The ring hop's rotation, fb_yield's and fb_yield_inline's (fiber_hop.h): self, the running
 * fiber, to the tail, `next` (the head) out and made current. Linking self first keeps this
 * right when `next` is the only one queued: its link then already points at self. A running
 * fiber's state is FB_RUNNABLE, so there is no state to store. Each store into the runtime is
 * volatile, one field each: fiber_hop.h's callers may be built without fiber.c's
 * -fno-tree-slp-vectorize, and GCC then merges neighbouring ones into 16-byte stores, which the
 * next hop's 8-byte loads cannot be forwarded from (fiber.c, switch_to).
 */
#define FB__STORE(lvalue, value) (*(__typeof__(lvalue) volatile *)&(lvalue) = (value))
static inline __attribute__((always_inline)) void fb__ring_rotate(fb_runtime *rt, fiber *self,
                                                                  fiber *next)
{
    self->next = NULL;
    rt->tail->next = self;
    FB__STORE(rt->tail, self);
    FB__STORE(rt->head, next->next);
    FB__STORE(rt->current, next);
}

#endif
