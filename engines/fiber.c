/* fiber.c - the single-threaded fiber runtime: run queue, star and ring scheduling, poller hook. */
#define _GNU_SOURCE
#include "fiber.h"
#include "fiber_stack_pool.h"
#include "switch_backends.h"

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DEFAULT_STACK = 64 * 1024 };

/* A fiber is RUNNABLE while queued or running, PARKED while it waits for fb_wake, DONE once
 * its function returned (or it called fb_exit). Running needs no state of its own. */
enum fb_state { FB_RUNNABLE, FB_PARKED, FB_DONE };

struct fiber {
    fiber *next; /* run queue, or the runtime's free list of records */
    enum fb_state state;
    bool joinable, joined;
    fb_runtime *rt;
    sw_ctx ctx; /* ctx.sp shares the first cache line with next and state */
    void (*fn)(void *);
    void *arg;
    void *wait_slot;
    fiber *joiner;              /* the fiber parked in fb_join on this one */
    sigjmp_buf *exit_to;        /* where fb_exit unwinds to, on this fiber's own stack */
    fiber *prev_all, *next_all; /* every record the runtime owns, for fb_runtime_free */
    sw_stack stack;
};

struct fb_runtime {
    /* The hot fields first: a hop touches only these and the two fibers' records. */
    fiber *current; /* the running fiber; NULL while the scheduler context runs */
    fiber *head, *tail;
    size_t runnable;   /* fibers in the run queue */
    int64_t pass_left; /* hops until the scheduler polls again (see fb_run) */
    enum sw_kind kind; /* which backend's jump switch_to calls directly */
    fb_policy policy;
    fb_stats stats;
    sw_ctx sched; /* the thread's own context, where fb_run's loop runs */
    const sw_backend *backend;
    fb_poller poller;
    fb__pool pool;
    fiber *free_records;
    fiber *all;
};

static __thread fb_runtime *tls_rt;

/*
 * Every switch the runtime makes goes through here, and from here through the switch layer's
 * one jump site (sw_jump_direct): the backend is known only at run time, so the compiled-in
 * backends are called directly behind a chain of compares on rt->kind that the branch
 * predictor learns at once.
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
    sw_jump_direct(rt->kind, &rt->backend, from, to);
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
void fb_yield(void)
{
    fb_runtime *rt = tls_rt;
    fiber *self = running_fiber(rt, "fb_yield");
    rt->stats.hops++;
    if (rt->policy == FB_RING && --rt->pass_left > 0) {
        fiber *next = rt->head;
        if (!next) return; /* alone: keep running */
        /* Rotate: self to the tail, the head out. Linking self first keeps this right when
         * `next` is the only one queued: its link then already points at self. A running
         * fiber's state is FB_RUNNABLE, so there is no state to store. */
        self->next = NULL;
        rt->tail->next = self;
        rt->tail = self;
        rt->head = next->next;
        rt->current = next;
        switch_to(rt, &self->ctx, &next->ctx);
        return;
    }
    rq_push(rt, self);
    switch_to(rt, &self->ctx, &rt->sched);
}

void fb_park(void)
{
    fb_runtime *rt = tls_rt;
    fiber *self = running_fiber(rt, "fb_park");
    self->state = FB_PARKED;
    rt->stats.hops++;
    if (rt->policy == FB_RING && --rt->pass_left > 0) {
        fiber *next = rq_pop(rt);
        if (next) {
            rt->current = next;
            switch_to(rt, &self->ctx, &next->ctx);
            return;
        }
    }
    switch_to(rt, &self->ctx, &rt->sched);
}

void fb_wake(fiber *f)
{
    if (f->state == FB_PARKED) rq_push(f->rt, f);
}

void fb_exit(void)
{
    /* Unwind to fiber_main so the fiber ends the one way every fiber ends: by returning. */
    siglongjmp(*running_fiber(tls_rt, "fb_exit")->exit_to, 1);
}

fiber *fb_self(void)
{
    return tls_rt ? tls_rt->current : NULL;
}

void **fb_wait_slot(fiber *f)
{
    return &f->wait_slot;
}

/* ---- records --------------------------------------------------------------------------- */

static fiber *record_new(fb_runtime *rt)
{
    fiber *f = rt->free_records;
    if (f)
        rt->free_records = f->next;
    else if (!(f = malloc(sizeof *f)))
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
    sigjmp_buf exit_to;
    f->exit_to = &exit_to;
    if (sigsetjmp(exit_to, 0) == 0) f->fn(f->arg);
    f->state = FB_DONE;
    f->rt->stats.switches++; /* the link jump that follows */
}

static fiber *spawn(fb_runtime *rt, void (*fn)(void *), void *arg, bool joinable)
{
    if (!rt || !fn) {
        errno = EINVAL;
        return NULL;
    }
    fiber *f = record_new(rt);
    if (!f) return NULL;
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
    f->rt = rt;
    f->fn = fn;
    f->arg = arg;
    f->wait_slot = NULL;
    f->joiner = NULL;
    f->exit_to = NULL;
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
static void reap(fb_runtime *rt, fiber *f)
{
    fb__pool_put(&rt->pool, &f->stack);
    memset(&f->stack, 0, sizeof f->stack);
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
int fb_run(fb_runtime *rt)
{
    if (!rt || rt != tls_rt || rt->current) {
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

fb_runtime *fb_runtime_new(const fb_config *cfg)
{
    size_t stack = cfg && cfg->stack_size ? cfg->stack_size : DEFAULT_STACK;
    if (!cfg || !cfg->backend || (cfg->policy != FB_STAR && cfg->policy != FB_RING) ||
        (cfg->poller.poll && !cfg->poller.pending) || stack < SW_STACK_MIN) {
        errno = EINVAL;
        return NULL;
    }
    if (tls_rt) {
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
    rt->kind = sw_kind_of(cfg->backend);
    rt->policy = cfg->policy;
    rt->poller = cfg->poller;
    rt->pass_left = cfg->poller.poll ? 1 : INT64_MAX;
    fb__pool_init(&rt->pool, stack);
    tls_rt = rt;
    return rt;
}

void fb_runtime_free(fb_runtime *rt)
{
    if (!rt) return;
    while (rt->all) {
        fiber *f = rt->all;
        if (f->stack.map) sw_stack_free(&f->stack); /* never finished: discarded */
        record_free(rt, f);
    }
    while (rt->free_records) {
        fiber *f = rt->free_records;
        rt->free_records = f->next;
        free(f);
    }
    fb__pool_drain(&rt->pool);
    if (tls_rt == rt) tls_rt = NULL;
    free(rt);
}

fb_runtime *fb_current_runtime(void)
{
    return tls_rt;
}

void fb_get_stats(const fb_runtime *rt, fb_stats *out)
{
    *out = rt->stats;
    out->stacks_mapped = rt->pool.mapped;
    out->stacks_cached = rt->pool.count;
    out->stack_maps = rt->pool.maps;
}

const char *fb_policy_name(fb_policy p)
{
    return p == FB_STAR ? "star" : p == FB_RING ? "ring" : "?";
}

int fb_policy_parse(const char *name, fb_policy *out)
{
    if (name && strcmp(name, "star") == 0)
        *out = FB_STAR;
    else if (name && strcmp(name, "ring") == 0)
        *out = FB_RING;
    else
        return -1;
    return 0;
}
