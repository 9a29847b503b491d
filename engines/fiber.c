/* fiber.c - the single-threaded fiber runtime: run queue, star and ring scheduling, poller hook. */
#define _GNU_SOURCE
#include "fiber.h"
#include "fiber_layout.h"
#include "hot_text.h"
#include "switch_backends.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SWITCHYARD_ASAN
#include <sanitizer/asan_interface.h>
#endif
#ifdef SWITCHYARD_HAVE_VALGRIND_H
#include <valgrind/memcheck.h>
#endif

enum { DEFAULT_STACK = 64 * 1024, DEFAULT_SHARED_STACK = 256 * 1024 };

/* The thread's runtime. Local-exec, as fb__io_tls: the layer is linked into programs only.
 * Not static: fiber_hop.h's inline hop reads it in its callers. */
__thread fb_runtime *fb__rt_tls __attribute__((tls_model("local-exec")));

/*
 * The functions of a hop and of a copy-stack resume start on a cache line, so that their
 * placement does not move with the code before them in this file. Without it, a change
 * elsewhere that shifted fb_run and fb_yield by 16 bytes took copystack/resume at 8 live bytes
 * and one fiber from 22.9-23.1 to 24.4-24.6 ns (medians of 8 alternating runs each, 2-core
 * Xeon VM), with no instruction changed in them.
 */
#define LINE_ALIGNED __attribute__((aligned(64)))

/*
 * Every switch the runtime makes goes through here, and from here through the switch layer's
 * one jump site (sw_jump_direct): the backend is known only at run time, so the compiled-in
 * backends are called directly behind a chain of compares on rt->kind that the branch
 * predictor learns at once. Copy mode plugs its hook in there (SW_KIND_HOOK: copy_jump, which
 * moves stacks and then comes back to the jump site with the backend's own kind), on the
 * branch no backend kind reaches, so a guarded runtime executes no instruction more for it.
 *
 * Code generation (engines/CMakeLists.txt builds this file with two flags, both measured on
 * the 2-core EPYC VM, ring/asm-nofpu at 16 fibers, interleaved runs):
 *  - -fno-jump-tables keeps the dispatch as compares and direct calls instead of an
 *    indirect jump. Against a jump table and against an indirect call through the ops table
 *    it ran within noise (best of 24: 5.76, 5.85, 5.87 ns per hop); the indirect call even
 *    saves about 6 instructions, but direct calls are the project's rule for timed paths.
 *  - -fno-tree-slp-vectorize: GCC merged the ring hop's two adjacent pointer stores
 *    (rt->current, rt->head) into one 16-byte SSE store built with movq/movhps; the next hop
 *    loads those fields back as 8-byte words, and that cost a quarter of the hop (median
 *    5.23 -> 4.26 ns, star unchanged at 8.4 ns, same instruction count).
 */
static inline void switch_to(fb_runtime *rt, sw_ctx *from, sw_ctx *to)
{
    rt->stats.switches++;
    sw_jump_direct(rt->kind, &rt->dispatch, from, to);
}

/* To the scheduler context. Copy mode's hook has nothing to do on that way (it only brings a
 * fiber's frames back onto its stack), so the jump goes straight to the backend; in guarded
 * mode jump_kind is kind, and this is switch_to. */
static inline void switch_to_sched(fb_runtime *rt, sw_ctx *from)
{
    rt->stats.switches++;
    sw_jump_direct(rt->jump_kind, &rt->backend, from, &rt->sched);
}

/* ---- the run queue: an intrusive FIFO through fiber.next ------------------------------ */

static inline void rq_push(fb_runtime *rt, fiber *f)
{
    f->state = FB_RUNNABLE;
    f->next = NULL;
    if (rt->tail)
        rt->tail->next = f;
    else
        rt->head = f;
    rt->tail = f;
    rt->runnable++;
}

static inline fiber *rq_pop(fb_runtime *rt)
{
    fiber *f = rt->head;
    if (f) {
        rt->head = f->next;
        if (!rt->head) rt->tail = NULL;
        rt->runnable--;
    }
    return f;
}

/* ---- copy stacks: evict the owner, bring the next fiber's frames back ------------------- */

static void fiber_main(void *arg);

/* A fiber's last act, before the switch layer's jump to its link (the scheduler context). */
static inline void fiber_done(fiber *f)
{
    f->state = FB_DONE;
    f->rt->stats.switches++; /* the link jump that follows */
}

static void __attribute__((noinline, noreturn)) copy_failed(const char *what)
{
    fprintf(stderr, "fiber: copy stack: %s\n", what);
    abort();
}

/*
 * Moving bytes on or off a shared stack. Unwatched, a live part that fits the record's save
 * area is whole lines between line-aligned addresses (see evict), moved here 16 bytes at a
 * time: the C library's memcpy spent a call and its size dispatch on every copy. Against it
 * copystack/resume took 0.956 [0.921, 0.976] of the time at 8 live bytes and 0.932 [0.895,
 * 0.947] at 64 with one fiber, and at 10^5 fibers 0.952 [0.914, 0.989] at 64 and the same
 * time at 8 (0.996 [0.954, 1.038]), for 17 instructions more per resume (2-core EPYC VM,
 * settled, 24 interleaved rounds). The empty asm in the loop keeps GCC from making it a memcpy
 * call again. Deeper parts go to memcpy, and with tools watching (ASan, memcheck) everything
 * goes to sw_stack_copy. The empty asm on n hides what the caller knows of it: where n is
 * bounded by SAVE_INLINE, GCC inlined memcpy as `rep movsq`, which cost about 4 times the
 * whole resume (copystack/resume at 8 live bytes, one fiber: 107 to 111 ns with it, 2-core
 * Xeon VM).
 */
typedef long long line_part __attribute__((vector_size(16), may_alias));

static inline __attribute__((always_inline)) void move_lines(char *dst, const char *src, size_t n)
{
    for (size_t at = 0; at < n; at += LINE) {
        const line_part *s = (const line_part *)(src + at);
        line_part *d = (line_part *)(dst + at);
        line_part a = s[0], b = s[1], c = s[2], e = s[3];
        d[0] = a;
        d[1] = b;
        d[2] = c;
        d[3] = e;
        __asm__("" : "+r"(at));
    }
}

/* `fits`: n <= SAVE_INLINE, as the caller found when it chose the save area, passed on so the
 * copy does not compare n again behind the empty asm. */
static inline __attribute__((always_inline)) void move_bytes(bool watched, bool fits, void *dst,
                                                             const void *src, size_t n)
{
    __asm__("" : "+r"(n));
    if (watched)
        sw_stack_copy(dst, src, n);
    else if (fits)
        move_lines(dst, src, n);
    else
        memcpy(dst, src, n);
}

static inline char *save_area(const fb_runtime *rt, fiber *f)
{
    return (char *)f + rt->save_inline;
}

/* Out of line: the buffer of a live part deeper than the inline area, grown first if it is too
 * small (64-byte steps). */
static char *__attribute__((noinline)) save_buffer(fb_runtime *rt, fiber *f, uint32_t n)
{
    if (n > f->save_cap) {
        /* What the buffer held is overwritten next: no need to keep it. */
        uint32_t cap = (n + LINE - 1) & ~(uint32_t)(LINE - 1);
        char *grown = aligned_alloc(LINE, cap);
        if (!grown) copy_failed("out of memory for a save buffer");
        free(f->save_buf);
        rt->stats.save_bytes += cap - f->save_cap;
        f->save_buf = grown;
        f->save_cap = cap;
    }
    return f->save_buf;
}

/*
 * Copy a suspended owner's live part out: into the record's save area when it fits there,
 * else whole into a buffer of its own (one copy each way: splitting a deep part between the
 * two cost one more call and copy, 2 ns per resume and yield at 512 live bytes).
 *
 * Unwatched, the part copied starts at the cache line of the stack pointer, not at the pointer
 * itself: the few bytes below it are dead (the fiber is suspended inside a call, and nothing
 * else runs on this stack), and with a line-aligned save area both copies then move whole
 * lines between aligned addresses (a shared stack's base is a page, so the line never starts
 * below it). A copy that started mid-line cost 2 to 5 ns more per resume and yield depending
 * on where the stack pointer fell (copystack/resume, 8 to 72 live bytes, one fiber, 2-core
 * Xeon VM: 27-32 ns, aligned 25-26 ns). ASan and memcheck get the exact live part: the bytes
 * below the stack pointer are poisoned there.
 */
static inline __attribute__((always_inline)) void evict(fb_runtime *rt, shared_stack *ss, fiber *f,
                                                        bool watched)
{
    char *sp = rt->backend->live_sp(&f->ctx);
    char *base = ss->stack.base, *top = base + ss->stack.size;
    if (__builtin_expect((uintptr_t)(sp - base) >= ss->stack.size, 0))
        copy_failed("no live stack pointer"); /* NULL, or off this stack */
    if (!watched) sp = (char *)((uintptr_t)sp & ~(uintptr_t)(LINE - 1));
    uint32_t n = (uint32_t)(top - sp);
    f->save_len = n;
    rt->stats.stack_saves++;
    rt->stats.bytes_saved += n;
    bool fits = n <= SAVE_INLINE;
    move_bytes(watched, fits, fits ? save_area(rt, f) : save_buffer(rt, f, n), sp, n);
}

/*
 * With many fibers, the record of the fiber a claim restores is a miss to memory (its hot line,
 * its saved registers and, at 8 live bytes, two lines of saved live part), and a claim does
 * too little else to hide it. So a claim fetches what the claims to come will read, in the order
 * they came the last time round, which a round-robin repeats:
 *  - every fiber remembers the fiber claimed CLAIM_AHEAD claims after it (`ahead`, set through
 *    the trail of the last CLAIM_AHEAD claims), and claiming it fetches that record's lines
 *    (its hot line, its register line, as many lines of inline live part as its own);
 *  - a live part too deep for the record is in a buffer whose address is only known once the
 *    record is in: the fiber half as far ahead, whose record the claim of half as long ago
 *    fetched, has its buffer fetched now (its first 16 lines; the hardware streams the rest).
 * Where the order changed, the guesses are wrong and cost a few prefetches. A stale guess (a
 * record since freed or reused) is still a record of the slabs, which live as long as the
 * runtime: its fields are read only to compute addresses, and a prefetch never faults. With
 * one fiber claiming over and over there is nothing to fetch.
 *
 * At 10^5 fibers the records do not stay in the cache, so without the prefetch every resume
 * waits for memory; with one fiber it costs nothing (results/notes/harness.md has the
 * measurements, with 8, 16 and 32 claims ahead).
 */
/* The lines of record `a` a resume reads: the hot line (on aarch64 it starts at `next`: save_buf
 * and ahead end the line before), the register line, and `inline_len` bytes of inline live
 * part. The context header between the hot and the register line is not read by a resume. */
static inline __attribute__((always_inline)) void
prefetch_record(const fb_runtime *rt, const fiber *a, uint32_t inline_len)
{
    __builtin_prefetch(&a->ctx.sp);
#if !defined(__x86_64__)
    __builtin_prefetch(&a->save_buf);
#endif
    __builtin_prefetch(&a->ctx.priv);
    const char *at = (const char *)a + rt->save_inline, *end = at + inline_len;
    for (; at < end; at += LINE)
        __builtin_prefetch(at);
}

static inline __attribute__((always_inline)) void prefetch_ahead(fb_runtime *rt, fiber *to)
{
    fiber *behind = rt->trail[rt->trail_at];
    if (behind == to) return;
    if (behind) behind->ahead = to;
    rt->trail[rt->trail_at] = to;
    rt->trail_at = (rt->trail_at + 1) % CLAIM_AHEAD;
    const fiber *a = to->ahead;
    if (to->save_len <= SAVE_INLINE) {
        if (!a) return;
        prefetch_record(rt, a, to->save_len);
        return;
    }
    /* A deep live part: its guess's record without inline lines, and the buffer of the fiber
     * half as far ahead (the guess of the claim of half as long ago, whose record is in). */
    if (a) prefetch_record(rt, a, 0);
    fiber *mid = rt->trail[(rt->trail_at + CLAIM_AHEAD / 2) % CLAIM_AHEAD];
    fiber *soon = mid ? mid->ahead : NULL;
    if (soon && soon->save_len > SAVE_INLINE) {
        uint32_t n = soon->save_len < 16 * LINE ? soon->save_len : 16 * LINE;
        for (uint32_t at = 0; at < n; at += LINE)
            __builtin_prefetch(soon->save_buf + at);
    }
}

/*
 * Give `to` its shared stack: evict the fiber whose frames are there (its stack pointer is
 * saved: it is suspended), then copy `to`'s frames back, or make its context there if it
 * never ran. The caller runs on another stack: the scheduler's, or a fiber's on another
 * shared stack. The save buffer is kept for the next eviction (it only grows).
 *
 * Written once and instantiated twice: claim_stack, what runs unwatched, has no test of the
 * tools on its path and keeps every value in registers (it is inlined into copy_jump, whose
 * frame it shares: 11 instructions less per resume than a call); claim_watched is the copy
 * ASan and memcheck need, and the making of a fresh context goes out of line.
 */
static void __attribute__((noinline)) make_on_stack(fb_runtime *rt, shared_stack *ss, fiber *to)
{
    if (sw_make(&to->ctx, rt->backend, &ss->stack, fiber_main, to, &rt->sched) != 0)
        copy_failed("sw_make on the shared stack failed");
    to->unmade = false;
}

static inline __attribute__((always_inline)) void claim(fb_runtime *rt, fiber *to, bool watched)
{
    shared_stack *ss = to->ss;
    prefetch_ahead(rt, to);
    fiber *owner = ss->owner;
    ss->owner = to;
    if (owner) evict(rt, ss, owner, watched);
    if (__builtin_expect(to->unmade, 0)) {
        make_on_stack(rt, ss, to);
        return;
    }
    uint32_t n = to->save_len;
    char *sp = (char *)ss->stack.base + ss->stack.size - n;
#ifdef SWITCHYARD_HAVE_VALGRIND_H
    /* memcheck may hold the bytes below the restored stack pointer as no-access (they were
     * released when another fiber's frames unwound there), and the restored fiber's next call
     * pushes into them. */
    if (watched) VALGRIND_MAKE_MEM_UNDEFINED(ss->stack.base, (size_t)(sp - (char *)ss->stack.base));
#endif
    rt->stats.stack_restores++;
    rt->stats.bytes_restored += n;
    bool fits = n <= SAVE_INLINE;
    move_bytes(watched, fits, sp, fits ? save_area(rt, to) : to->save_buf, n); /* last */
}

static void __attribute__((noinline)) claim_watched(fb_runtime *rt, fiber *to)
{
    claim(rt, to, true);
}

static inline __attribute__((always_inline)) void claim_stack(fb_runtime *rt, fiber *to)
{
    if (__builtin_expect(rt->tools_watch, 0)) {
        claim_watched(rt, to);
        return;
    }
    claim(rt, to, false);
}

static inline fiber *fiber_of(sw_ctx *ctx)
{
    return (fiber *)((char *)ctx - offsetof(fiber, ctx));
}

/*
 * The copy-stack hook of switch_to. Before resuming a fiber whose frames are not on its
 * shared stack, evict the owner and restore them (claim_stack). That copy cannot run on the
 * stack it overwrites: when the running fiber is itself the owner (a ring hop between two
 * fibers of one stack), the hop goes to the scheduler context instead, with the target back
 * at the head of the run queue, so fb_run resumes it next and that resume claims the stack
 * (a handoff: one more switch).
 *
 * Nothing runs here after the jump, so it is a tail call: the hook leaves no frame behind,
 * and a context resumes straight in switch_to's caller, as in guarded mode. A frame here
 * that outlived the jump would be copied with every live part (48 bytes), and each side of
 * a resume would return through it: one more return per switch whose predicted target the
 * stack switch has made stale: a resume with that frame took about twice as long
 * (results/notes/harness.md).
 */
static void LINE_ALIGNED copy_jump(sw_ctx *from, sw_ctx *to)
{
    fb_runtime *rt = fb__rt_tls;
    if (to != &rt->sched) {
        fiber *f = fiber_of(to);
        if (f->ss->owner != f) {
            if (from != &rt->sched && fiber_of(from)->ss == f->ss) {
                /* rt->current is f already: fb_run finds it there, then pops it again. */
                f->next = rt->head;
                rt->head = f;
                if (!rt->tail) rt->tail = f;
                rt->runnable++;
                rt->stats.handoffs++;
                to = &rt->sched;
            } else {
                claim_stack(rt, f);
            }
        }
    }
    sw_jump_direct(rt->jump_kind, &rt->backend, from, to);
}

/* The jump site's SW_KIND_HOOK target in copy mode: only its jump is ever called. */
static const sw_backend copy_hook = {.name = "copy-stack hook", .jump = copy_jump};

/* ---- giving up the CPU ----------------------------------------------------------------- */

/*
 * Star always goes back to the scheduler context. Ring switches straight to the next queued
 * fiber and returns to the scheduler only when nothing is queued, or when a pass is over and
 * the poller is due (pass_left, see fb_run).
 */

static void __attribute__((noinline, noreturn)) outside_fiber(const char *caller)
{
    fprintf(stderr, "fiber: %s called outside a fiber\n", caller);
    abort();
}

static inline fiber *running_fiber(fb_runtime *rt, const char *caller)
{
    if (__builtin_expect(!rt || !rt->current, 0)) outside_fiber(caller);
    return rt->current;
}

/* The hot path of ring mode: one switch plus a handful of loads and stores. */
void LINE_ALIGNED fb_yield(void)
{
    fb_runtime *rt = fb__rt_tls;
    fiber *self = running_fiber(rt, "fb_yield");
    rt->stats.hops++;
    if (rt->policy == FB_RING && --rt->pass_left > 0) {
        fiber *next = rt->head;
        if (!next) return; /* alone: keep running */
        fb__ring_rotate(rt, self, next);
        switch_to(rt, &self->ctx, &next->ctx);
        return;
    }
    rq_push(rt, self);
    switch_to_sched(rt, &self->ctx);
}

void HOT_TEXT LINE_ALIGNED fb_park(void)
{
    fb_runtime *rt = fb__rt_tls;
    fiber *self = running_fiber(rt, "fb_park");
    self->state = FB_PARKED;
    self->resume_at = __builtin_frame_address(0);
    rt->stats.hops++;
    if (rt->policy == FB_RING && --rt->pass_left > 0) {
        fiber *next = rq_pop(rt);
        if (next) {
            rt->current = next;
            switch_to(rt, &self->ctx, &next->ctx);
            return;
        }
    }
    switch_to_sched(rt, &self->ctx);
}

/*
 * A parked fiber's stack is one page per fiber that nothing else touches, so with many fibers
 * the first load after its resume (the pops of fb_park's callers) misses the TLB and the
 * cache: a page walk and a memory access on the critical path of every IO wake-up. fb_wake
 * starts both early. An engine delivers a batch of readiness at once, so the walks of a whole
 * batch overlap one another and the work of the fibers that run before. Measured with the
 * fiber echo server at 1,000 connections on the 2-core Xeon VM (7 interleaved rounds of 2 s):
 * CPU per request went from 1.094 to 1.032 of the epoll yardstick's on edge and from 1.100 to
 * 1.053 on merged. A first version, prefetching at the saved stack pointer, took the samples
 * on that first pop from 430 to 180 per million requests, and 8 lines measured as 2 did.
 * In copy mode the address is on the shared stack, where the fiber's live part is copied
 * back before it runs: the lines are then warm for that copy. A prefetch never faults.
 * always_inline because GCC 12's ipa-modref deleted the prefetches of a plain inline helper
 * here.
 */
static inline __attribute__((always_inline)) void warm_resume(const fiber *f)
{
    __builtin_prefetch(f->resume_at);
    __builtin_prefetch(f->resume_at + 64);
}

/* Both wakes inline this, so the sync primitives' fb_wake costs no call more than it did. */
static inline __attribute__((always_inline)) void wake(fiber *f, uint16_t value)
{
    if (f->state == FB_PARKED) {
        f->woken_with = value;
        rq_push(f->rt, f);
        warm_resume(f);
    }
}

void HOT_TEXT fb_wake_with(fiber *f, uint16_t value)
{
    wake(f, value);
}

void fb_wake(fiber *f)
{
    wake(f, 0);
}

void fb_exit(void)
{
    /* The fiber ends the way a returning one does (fiber_main's tail, then the switch layer's
     * jump to the link), without unwinding: its frames are dead, and nothing of them is read
     * again. No jump buffer back to fiber_main, whose frame is part of every live part copy mode
     * moves: a __builtin_setjmp there made it save all six callee-saved registers, 64 of the
     * 192 bytes moved per eviction at 8 live bytes (a cache line to read and one to write per
     * resume). */
    fiber *f = running_fiber(fb__rt_tls, "fb_exit");
#ifdef SWITCHYARD_ASAN
    __asan_handle_no_return(); /* the frames abandoned must not stay poisoned */
#endif
    fiber_done(f);
    sw_exit(&f->ctx);
}

/* ---- records --------------------------------------------------------------------------- */

/* A record from the free list, or the next one of the slabs. */
static fiber *record_new(fb_runtime *rt)
{
    fiber *f = rt->free_records;
    if (f)
        rt->free_records = f->next;
    else if (!(f = fb__slabs_take(&rt->records)))
        return NULL;
    f->prev_all = NULL;
    f->next_all = rt->all;
    if (rt->all) rt->all->prev_all = f;
    rt->all = f;
    return f;
}

static void record_free(fb_runtime *rt, fiber *f)
{
    if (f->prev_all)
        f->prev_all->next_all = f->next_all;
    else
        rt->all = f->next_all;
    if (f->next_all) f->next_all->prev_all = f->prev_all;
    f->next = rt->free_records;
    rt->free_records = f;
}

/* Runs on the fiber's own stack; when it returns, the switch layer jumps to the link, which
 * is the scheduler context, and fb_run reaps the fiber there. */
static void fiber_main(void *arg)
{
    fiber *f = arg;
    f->fn(f->arg);
    fiber_done(f);
}

static fiber *spawn(fb_runtime *rt, void (*fn)(void *), void *arg, bool joinable)
{
    if (!rt || !fn) {
        errno = EINVAL;
        return NULL;
    }
    fiber *f = record_new(rt);
    if (!f) return NULL;
    f->save_buf = NULL;
    f->save_len = f->save_cap = 0;
    f->ahead = NULL;
    memset(&f->stack, 0, sizeof f->stack);
    if (rt->shared) {
        /* The context is made on the shared stack when the fiber first runs (claim_stack):
         * making it now would overwrite the frames of the fiber running there. */
        f->ss = &rt->shared[rt->stats.spawned % rt->nshared];
        f->unmade = true;
        f->ctx.state = SW_FRESH;
    } else {
        f->ss = NULL;
        f->unmade = false;
        if (fb__pool_get(&rt->pool, &f->stack) != 0) {
            record_free(rt, f);
            errno = EAGAIN;
            return NULL;
        }
        if (sw_make(&f->ctx, rt->backend, &f->stack, fiber_main, f, &rt->sched) != 0) {
            int saved = errno;
            fb__pool_put(&rt->pool, &f->stack);
            record_free(rt, f);
            errno = saved;
            return NULL;
        }
    }
    f->rt = rt;
    f->fn = fn;
    f->arg = arg;
    f->wait_slot = NULL;
    f->joiner = NULL;
    f->joinable = joinable;
    f->joined = false;
    rt->stats.spawned++;
    rt->stats.live++;
    rq_push(rt, f);
    return f;
}

fiber *fb_spawn(fb_runtime *rt, void (*fn)(void *), void *arg)
{
    return spawn(rt, fn, arg, false);
}

fiber *fb_spawn_joinable(fb_runtime *rt, void (*fn)(void *), void *arg)
{
    return spawn(rt, fn, arg, true);
}

int fb_join(fiber *f)
{
    fiber *self = fb_self();
    if (!self || !f || f == self || f->joined) {
        errno = EINVAL;
        return -1;
    }
    f->joined = true;
    f->joiner = self;
    while (f->state != FB_DONE)
        fb_park(); /* reap() wakes us; a stray fb_wake just loops */
    record_free(self->rt, f);
    return 0;
}

/* Called in the scheduler context, off the finished fiber's stack, so the stack can go. */
static void release_stack(fb_runtime *rt, fiber *f)
{
    if (f->ss) {
        if (f->ss->owner == f) f->ss->owner = NULL; /* its frames are dead: nothing to save */
        rt->stats.save_bytes -= f->save_cap;
        free(f->save_buf);
        f->save_buf = NULL;
        f->save_cap = f->save_len = 0;
        f->ss = NULL;
    } else if (f->stack.map) {
        fb__pool_put(&rt->pool, &f->stack);
        memset(&f->stack, 0, sizeof f->stack);
    }
}

static void reap(fb_runtime *rt, fiber *f)
{
    release_stack(rt, f);
    rt->stats.finished++;
    rt->stats.live--;
    if (f->joiner)
        fb_wake(f->joiner); /* the joiner frees the record */
    else if (!f->joinable)
        record_free(rt, f);
}

/* ---- the scheduler --------------------------------------------------------------------- */

static int poll_now(fb_runtime *rt, int64_t timeout_ns)
{
    if (!rt->poller.poll) {
        rt->pass_left = INT64_MAX; /* nothing to poll: passes need no end */
        return 0;
    }
    rt->stats.polls++;
    if (rt->poller.poll(rt->poller.state, timeout_ns) < 0) return -1;
    rt->pass_left = rt->runnable > 0 ? (int64_t)rt->runnable : 1;
    return 0;
}

static bool waiting_on_poller(const fb_runtime *rt)
{
    return rt->poller.poll && rt->poller.pending(rt->poller.state) > 0;
}

/*
 * The scheduler loop. A pass is one turn through the fibers that were runnable at the last
 * poll; pass_left counts its hops down (fibers decrement it in ring mode), and at zero the
 * poller runs without blocking. With nothing runnable, the poller blocks instead; with nothing
 * to wait for either, the loop ends.
 */
int HOT_TEXT LINE_ALIGNED fb_run(fb_runtime *rt)
{
    if (!rt || rt != fb__rt_tls || rt->current) {
        errno = EINVAL; /* another thread's runtime, or called from inside a fiber */
        return -1;
    }
    for (;;) {
        if (rt->pass_left <= 0 && rt->runnable > 0 && poll_now(rt, 0) < 0) return -1;
        fiber *f = rq_pop(rt);
        if (!f) {
            if (!waiting_on_poller(rt)) break;
            if (poll_now(rt, -1) < 0) return -1;
            continue;
        }
        /* In ring mode the fibers count a pass down themselves (each hop); the scheduler
         * starting the first one is no hop, else the last fiber woken by a poll would wait
         * for the next poll. In star mode every hop comes through here. */
        if (rt->policy == FB_STAR) rt->pass_left--;
        rt->current = f;
        switch_to(rt, &rt->sched, &f->ctx);
        fiber *back = rt->current; /* in ring mode not necessarily f */
        rt->current = NULL;
        if (back->state == FB_DONE) reap(rt, back);
    }
    if (rt->stats.live == 0) return 0;
    errno = EDEADLK; /* parked fibers that no poller will ever wake */
    return -1;
}

/* ---- the runtime ----------------------------------------------------------------------- */

/* Map the K shared stacks of copy mode. 0, or -1 with errno. */
static int map_shared_stacks(fb_runtime *rt, unsigned k, size_t size)
{
    rt->shared = calloc(k, sizeof *rt->shared);
    if (!rt->shared) return -1;
    rt->nshared = k;
    for (unsigned i = 0; i < k; i++) {
        if (sw_stack_alloc(&rt->shared[i].stack, size) != 0) return -1;
        rt->stats.stack_maps++;
    }
    return 0;
}

fb_runtime *fb_runtime_new(const fb_config *cfg)
{
    bool copy = cfg && cfg->stack_mode == FB_STACK_COPY;
    size_t stack = cfg && cfg->stack_size ? cfg->stack_size
                   : copy                 ? DEFAULT_SHARED_STACK
                                          : DEFAULT_STACK;
    unsigned k = cfg && cfg->shared_stacks ? cfg->shared_stacks : 1;
    if (!cfg || !cfg->backend || (cfg->policy != FB_STAR && cfg->policy != FB_RING) ||
        (cfg->poller.poll && !cfg->poller.pending) || stack < SW_STACK_MIN ||
        (cfg->stack_mode != FB_STACK_GUARDED && !copy) || k > FB_SHARED_STACKS_MAX ||
        (!copy && cfg->shared_stacks) || (cfg->timers && !tm_ops_valid(cfg->timers))) {
        errno = EINVAL;
        return NULL;
    }
    if (copy && !cfg->backend->props.copy_stack) {
        errno = ENOTSUP; /* the backend cannot say where a suspended stack's live part starts */
        return NULL;
    }
    if (fb__rt_tls) {
        errno = EBUSY; /* one runtime per thread */
        return NULL;
    }
    fb_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) return NULL;
    /* Every runtime thread gets the guard-page handler, so an overflow is reported. */
    if (sw_init_self(&rt->sched, cfg->backend) != 0 || sw_overflow_guard_init() != 0) {
        int saved = errno;
        free(rt);
        errno = saved;
        return NULL;
    }
    rt->backend = cfg->backend;
    rt->jump_kind = sw_kind_of(cfg->backend);
    rt->kind = copy ? SW_KIND_HOOK : rt->jump_kind;
    rt->dispatch = copy ? &copy_hook : cfg->backend;
    rt->policy = cfg->policy;
    rt->poller = cfg->poller;
    rt->timers = cfg->timers ? cfg->timers : tm_default();
    rt->pass_left = cfg->poller.poll ? 1 : INT64_MAX;
    rt->stack_mode = cfg->stack_mode;
#if defined(SWITCHYARD_ASAN)
    rt->tools_watch = true;
#elif defined(SWITCHYARD_HAVE_VALGRIND_H)
    /* Only memcheck tracks which stack bytes are addressable; it alone answers this request
     * (with -1, every other tool with the default 0). Under cachegrind and callgrind the copy
     * then takes the path switch-bench times, so their counts are of that path. */
    rt->tools_watch = RUNNING_ON_VALGRIND && VALGRIND_MAKE_MEM_UNDEFINED(rt, 0) != 0;
#endif
    /* Shift records in their strides so that ctx.priv starts a line, as far as the record's
     * own alignment allows; the inline save area (copy mode) starts at the line after ctx. */
    size_t priv_at = offsetof(fiber, ctx) + offsetof(sw_ctx, priv);
    size_t shift = ((LINE - priv_at % LINE) % LINE) & ~(_Alignof(fiber) - 1);
    size_t end = shift + offsetof(fiber, ctx) + sw_ctx_size(cfg->backend);
    end = (end + LINE - 1) & ~(size_t)(LINE - 1);
    rt->save_inline = copy ? end - shift : 0;
    fb__slabs_init(&rt->records, copy ? end + SAVE_INLINE : end, shift, copy);
    fb__pool_init(&rt->pool, stack);
    if (copy && map_shared_stacks(rt, k, stack) != 0) {
        int saved = errno;
        fb_runtime_free(rt); /* fb__rt_tls is not set yet */
        errno = saved;
        return NULL;
    }
    fb__rt_tls = rt;
    return rt;
}

void fb_runtime_free(fb_runtime *rt)
{
    if (!rt) return;
    while (rt->all) {
        fiber *f = rt->all;
        if (f->stack.map) sw_stack_free(&f->stack); /* never finished: discarded */
        free(f->save_buf);
        record_free(rt, f);
    }
    fb__slabs_drain(&rt->records);
    fb__pool_drain(&rt->pool);
    for (unsigned i = 0; rt->shared && i < rt->nshared; i++)
        if (rt->shared[i].stack.map) sw_stack_free(&rt->shared[i].stack);
    free(rt->shared);
    if (fb__rt_tls == rt) fb__rt_tls = NULL;
    free(rt);
}

fiber *fb__claim_ahead(const fiber *f)
{
    return f->ahead;
}

void fb__evict_shared(fb_runtime *rt)
{
    for (unsigned i = 0; i < rt->nshared; i++) {
        shared_stack *ss = &rt->shared[i];
        if (ss->owner && ss->owner != rt->current) {
            if (rt->tools_watch)
                evict(rt, ss, ss->owner, true);
            else
                evict(rt, ss, ss->owner, false);
            ss->owner = NULL;
        }
    }
}
