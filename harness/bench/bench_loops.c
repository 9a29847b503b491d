/* bench_loops.c - switch, create and scheduler loops, one direct-call instance per backend. */
/* The compiler-assisted jumps inline in the loops: each loop has its backend's kind as a constant
 * (switch_cc.h). */
#define SW_JUMP_INLINE_CC
#include "bench_loops.h"
#include "fiber_hop.h"
#include "switch_backends.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Calls the compiler may not inline, drop or see through; clang has no noipa, and its noinline
 * with the asm barriers below keeps the calls (a clang build is what the cc-pnone row needs). */
#if defined(__clang__)
#define NO_IPA __attribute__((noinline))
#else
#define NO_IPA __attribute__((noipa))
#endif

NO_IPA static void empty_function(void)
{
    __asm__ volatile("");
}

void bl_call_loop(long rounds)
{
    for (long i = 0; i < rounds; i++)
        empty_function();
}

/* The asm hides the increment from the compiler, which could otherwise sum the chain. */
NO_IPA static long next_link(long x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

long bl_call_chain(long rounds, long x)
{
    for (long i = 0; i < rounds; i++)
        x = next_link(x);
    return x;
}

/*
 * One copy of each loop per backend, so that the jump is a direct call the compiler can see:
 * each copy calls the switch layer's one jump site, sw_jump_direct, with its backend's kind
 * as a constant, which leaves exactly that backend's jump.
 */
#define DEFINE_LOOPS(id)                                                                           \
    static void pair_loop_##id(bl_pair *p, long n)                                                 \
    {                                                                                              \
        for (long i = 0; i < n; i++)                                                               \
            sw_jump_direct(SW_KIND_##id, &p->backend, &p->self, &p->peer);                         \
    }                                                                                              \
    static void pair_peer_##id(void *arg)                                                          \
    {                                                                                              \
        bl_pair *p = arg;                                                                          \
        while (!p->stop)                                                                           \
            sw_jump_direct(SW_KIND_##id, &p->backend, &p->peer, &p->self);                         \
    }                                                                                              \
    static int create_loop_##id(bl_create *c, long n)                                              \
    {                                                                                              \
        for (long i = 0; i < n; i++) {                                                             \
            if (sw_make(&c->ctx, c->backend, &c->stack, create_entry, c, &c->self) != 0)           \
                return -1;                                                                         \
            sw_jump_direct(SW_KIND_##id, &c->backend, &c->self, &c->ctx);                          \
        }                                                                                          \
        return 0;                                                                                  \
    }

static void create_entry(void *arg)
{
    ((bl_create *)arg)->entered++;
}

SW_BACKENDS(DEFINE_LOOPS)

struct loops {
    const sw_backend *backend;
    void (*pair_loop)(bl_pair *p, long n);
    sw_entry_fn pair_peer;
    int (*create_loop)(bl_create *c, long n);
};

#define LOOPS(id) {&sw_backend_##id, pair_loop_##id, pair_peer_##id, create_loop_##id},

static const struct loops all_loops[] = {SW_BACKENDS(LOOPS)};

static const struct loops *loops_for(const sw_backend *b)
{
    for (size_t i = 0; i < sizeof all_loops / sizeof all_loops[0]; i++)
        if (all_loops[i].backend == b) return &all_loops[i];
    errno = ENOTSUP; /* a backend this file has no direct loop for */
    return NULL;
}

/* ---- switch ---------------------------------------------------------------------------- */

int bl_pair_init(bl_pair *p, const sw_backend *b)
{
    const struct loops *l = loops_for(b);
    if (!l || sw_stack_alloc(&p->stack, 64 * 1024) != 0) return -1;
    p->backend = b;
    p->loop = l->pair_loop;
    p->stop = false;
    if (sw_init_self(&p->self, b) != 0 ||
        sw_make(&p->peer, b, &p->stack, l->pair_peer, p, &p->self) != 0) {
        sw_stack_free(&p->stack);
        return -1;
    }
    sw_jump(&p->self, &p->peer); /* the peer starts and comes straight back */
    return 0;
}

void bl_pair_fini(bl_pair *p)
{
    p->stop = true;
    sw_jump(&p->self, &p->peer); /* the peer's entry returns; the link rule brings us back */
    sw_stack_free(&p->stack);
}

/* ---- switch/floor ---------------------------------------------------------------------- */

#if defined(SWITCHYARD_HAVE_FLOOR) && !defined(SWITCHYARD_ASAN)
void bl_floor_jump(void **save_sp, void *const *load_sp);
void bl_floor_fp_jump(void **save_sp, void *const *load_sp);
void bl_floor_ret_jump(void **save_sp, void *const *load_sp);
void bl__floor_entry(void);

/* One copy of the loop per switch, so each calls its switch directly. */
static void floor_loop(bl_floor *f, long n)
{
    for (long i = 0; i < n; i++)
        bl_floor_jump(&f->self_sp, &f->peer_sp);
}

static void floor_fp_loop(bl_floor *f, long n)
{
    for (long i = 0; i < n; i++)
        bl_floor_fp_jump(&f->self_sp, &f->peer_sp);
}

static void floor_ret_loop(bl_floor *f, long n)
{
    for (long i = 0; i < n; i++)
        bl_floor_ret_jump(&f->self_sp, &f->peer_sp);
}

/* The peer's whole life: bounce back until stopped, then leave for good (its stack is simply
 * unmapped afterwards: the floor has no link rule). */
static void __attribute__((noreturn)) floor_peer(bl_floor *f)
{
    void (*jump)(void **, void *const *) = f->kind == BL_FLOOR_FP    ? bl_floor_fp_jump
                                           : f->kind == BL_FLOOR_RET ? bl_floor_ret_jump
                                                                     : bl_floor_jump;
    while (!f->stop)
        jump(&f->peer_sp, &f->self_sp);
    jump(&f->peer_sp, &f->self_sp);
    __builtin_unreachable();
}

int bl_floor_init(bl_floor *f, bl_floor_kind kind)
{
    if (sw_stack_alloc(&f->stack, 64 * 1024) != 0) return -1;
    f->kind = kind;
    bool fp = kind == BL_FLOOR_FP;
    f->stop = false;
    /* The frame the switch pops (see the .S): [FP word,] r15, r14, r13, r12, rbp = argument,
     * rbx = entry function, return address = bl__floor_entry, ending at the 16-byte-aligned
     * top, so bl__floor_entry starts with rsp 16-byte aligned and calls like any function
     * (floor-ret's `ret` pops the same return address). */
    uintptr_t top = ((uintptr_t)f->stack.base + f->stack.size) & ~(uintptr_t)15;
    void **frame = (void **)top - (fp ? 8 : 7);
    void **w = frame;
    if (fp) {
        uint32_t mxcsr;
        uint16_t cw;
        __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(cw));
        uint64_t word = mxcsr | (uint64_t)cw << 32;
        __builtin_memcpy(w++, &word, sizeof word);
    }
    for (int i = 0; i < 4; i++)
        *w++ = NULL;                      /* r15-r12 */
    *w++ = f;                             /* rbp: the argument */
    *w++ = (void *)(uintptr_t)floor_peer; /* rbx: the entry */
    *w++ = (void *)(uintptr_t)bl__floor_entry;
    f->peer_sp = frame;
    bl_floor_run(f, 1); /* the peer starts and comes straight back */
    return 0;
}

void bl_floor_run(bl_floor *f, long round_trips)
{
    if (f->kind == BL_FLOOR_FP)
        floor_fp_loop(f, round_trips);
    else if (f->kind == BL_FLOOR_RET)
        floor_ret_loop(f, round_trips);
    else
        floor_loop(f, round_trips);
}

void bl_floor_fini(bl_floor *f)
{
    f->stop = true;
    bl_floor_run(f, 1);
    sw_stack_free(&f->stack);
}
#else
int bl_floor_init(bl_floor *f, bl_floor_kind kind)
{
    (void)f, (void)kind;
    errno = ENOTSUP; /* x86_64 only; ASan must hear of every stack switch, and this one is mute */
    return -1;
}
void bl_floor_run(bl_floor *f, long round_trips)
{
    (void)f, (void)round_trips;
}
void bl_floor_fini(bl_floor *f)
{
    (void)f;
}
#endif

/* ---- create ---------------------------------------------------------------------------- */

int bl_create_init(bl_create *c, const sw_backend *b)
{
    if (!loops_for(b) || sw_stack_alloc(&c->stack, 64 * 1024) != 0) return -1;
    c->backend = b;
    c->entered = 0;
    if (sw_init_self(&c->self, b) != 0) {
        sw_stack_free(&c->stack);
        return -1;
    }
    return 0;
}

int bl_create_run(bl_create *c, long rounds)
{
    return loops_for(c->backend)->create_loop(c, rounds);
}

void bl_create_fini(bl_create *c)
{
    sw_stack_free(&c->stack);
}

/* ---- sched ----------------------------------------------------------------------------- */

long bl_sched_batch(long fibers)
{
    return fibers >= 256 ? 1 : (256 + fibers - 1) / fibers;
}

/*
 * The driver and its peers, once with fb_yield and once with fb_yield_inline (fiber_hop.h):
 * the ring rows of the compiler-assisted backends hop inline, which is where those backends
 * save less than asm; every other row calls fb_yield, as any caller outside this file does.
 */
#define DEFINE_SCHED(suffix, yield)                                                                \
    static void sched_driver##suffix(void *arg)                                                    \
    {                                                                                              \
        bl_sched *s = arg;                                                                         \
        fb_runtime *rt = fb_current_runtime();                                                     \
        yield(); /* warm-up round: every fiber runs once and touches its stack */                  \
        fb_get_stats(rt, &s->before);                                                              \
        long rounds = 0;                                                                           \
        while (s->more(s->more_arg)) {                                                             \
            for (long i = 0; i < s->batch; i++)                                                    \
                yield();                                                                           \
            rounds += s->batch;                                                                    \
        }                                                                                          \
        fb_get_stats(rt, &s->after);                                                               \
        s->rounds = rounds;                                                                        \
        s->stop = true;                                                                            \
    }                                                                                              \
    static void sched_peer##suffix(void *arg)                                                      \
    {                                                                                              \
        bl_sched *s = arg;                                                                         \
        while (!s->stop)                                                                           \
            yield();                                                                               \
    }
DEFINE_SCHED(, fb_yield)
DEFINE_SCHED(_inline, fb_yield_inline)
#undef DEFINE_SCHED

bool bl_sched_hops_inline(const bl_sched *s)
{
#if defined(SWITCHYARD_SWITCH_CC_H) && !defined(SWITCHYARD_ASAN)
    return s->policy == FB_RING && s->stack_mode == FB_STACK_GUARDED &&
           (s->backend == &sw_backend_cc || s->backend == &sw_backend_cc_nofpu);
#else
    (void)s;
    return false;
#endif
}

int bl_sched_run(bl_sched *s)
{
    fb_config cfg = {.backend = s->backend,
                     .policy = s->policy,
                     .stack_size = s->stack_size,
                     .stack_mode = s->stack_mode,
                     .shared_stacks = s->shared_stacks};
    fb_runtime *rt = fb_runtime_new(&cfg);
    if (!rt) return -1;
    s->stop = false;
    s->rounds = 0;
    bool hop_inline = bl_sched_hops_inline(s);
    int rc = fb_spawn(rt, hop_inline ? sched_driver_inline : sched_driver, s) ? 0 : -1;
    for (long i = 1; rc == 0 && i < s->fibers; i++)
        rc = fb_spawn(rt, hop_inline ? sched_peer_inline : sched_peer, s) ? 0 : -1;
    if (rc == 0) rc = fb_run(rt);
    int saved = errno;
    fb_runtime_free(rt); /* on failure this discards the fibers that never ran */
    errno = saved;
    return rc;
}

double bl_sched_switches_per_hop(const bl_sched *s)
{
    uint64_t hops = s->after.hops - s->before.hops;
    return hops ? (double)(s->after.switches - s->before.switches) / (double)hops : 0.0;
}

bool bl_guarded_fits(long fibers)
{
    long limit = 65530; /* Linux's default, if /proc cannot say */
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &limit) != 1) limit = 65530;
        fclose(f);
    }
    return 2 * fibers + 1024 <= limit;
}

/* ---- copystack ------------------------------------------------------------------------- */

long bl_copystack_batch(long fibers)
{
    return fibers * bl_sched_batch(fibers);
}

static void copystack_worker(void *arg)
{
    bl_copystack *c = arg;
    /* The N live bytes: in this frame, written once, kept across every yield. */
    volatile char *live = __builtin_alloca(c->bytes);
    for (size_t i = 0; i < c->bytes; i++)
        live[i] = (char)i;
    while (!c->stop)
        fb_yield();
    if (c->bytes && live[c->bytes - 1] != (char)(c->bytes - 1)) abort(); /* lost in a copy */
}

/* The poller hook, in the scheduler context once per pass over the F fibers. */
static int copystack_poll(void *state, int64_t timeout_ns)
{
    (void)timeout_ns;
    bl_copystack *c = state;
    fb_runtime *rt = fb_current_runtime();
    /* The first poll comes after one hop, the second after a whole pass: from then on every
     * fiber has run once and every pass is F measured ops. */
    if (++c->polls <= 2) {
        if (c->polls == 2) {
            fb_get_stats(rt, &c->before);
            c->after = c->before;
            c->stop = !c->more(c->more_arg);
        }
        if (c->fibers == 1) fb__evict_shared(rt);
        return 0;
    }
    if (c->stop) return 0;
    c->ops += c->fibers;
    c->since_more += c->fibers;
    if (c->since_more >= c->batch) {
        c->since_more = 0;
        if (!c->more(c->more_arg)) {
            fb_get_stats(rt, &c->after);
            c->stop = true;
            return 0;
        }
    }
    if (c->fibers == 1) fb__evict_shared(rt);
    return 0;
}

static size_t copystack_pending(void *state)
{
    (void)state;
    return 0; /* nothing waits on this poller: fb_run ends once the fibers have */
}

int bl_copystack_run(bl_copystack *c)
{
    fb_config cfg = {.backend = c->backend,
                     .policy = FB_STAR,
                     .stack_mode = c->guarded ? FB_STACK_GUARDED : FB_STACK_COPY,
                     .shared_stacks = c->guarded ? 0 : 1,
                     .poller = {.state = c, .poll = copystack_poll, .pending = copystack_pending}};
    fb_runtime *rt = fb_runtime_new(&cfg);
    if (!rt) return -1;
    c->stop = false;
    c->ops = c->polls = c->since_more = 0;
    int rc = 0;
    for (long i = 0; rc == 0 && i < c->fibers; i++)
        rc = fb_spawn(rt, copystack_worker, c) ? 0 : -1;
    if (rc == 0) rc = fb_run(rt);
    int saved = errno;
    fb_runtime_free(rt);
    errno = saved;
    return rc;
}
