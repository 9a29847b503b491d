/* test-inline.c - values the compiler keeps in registers across the timed code's jump site
 * (sw_jump_direct with a constant kind, the compiler-assisted jumps inlined) survive the
 * switches of both contexts, and so does each context's rounding mode where the backend keeps
 * the FP control state per context. */
#define SW_JUMP_INLINE_CC /* the form the benchmark loops run (switch_cc.h) */
#include "check.h"
#include "switch_backends.h"

#include <fenv.h>
#include <stdlib.h>
#include <string.h>

enum { INLINE_ROUNDS = 1000, LIVE = 13 };

struct inline_test {
    check_pair pair;
    const sw_backend *backend;
    int rounds;
    volatile unsigned long seed; /* read once per side, so nothing is folded at compile time */
    unsigned long got[2][LIVE + 1];
    unsigned modes[2]; /* each side's rounding modes after its last switch */
};

/* Each side's own rounding mode, set before its first switch where the backend keeps the FP
 * control state per context (the others leak it from one context to the other). */
static const int side_round[2] = {FE_UPWARD, FE_TOWARDZERO};

/* The rounding modes in force, from every register that holds one: on x86_64 the MXCSR's
 * (bits 13-14) and the x87 control word's (bits 10-11), which the backends save and load
 * separately; elsewhere fegetround's. */
static unsigned rounding_modes(void)
{
#if defined(__x86_64__)
    unsigned mxcsr;
    unsigned short x87;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87));
    return (mxcsr >> 13 & 3) << 2 | (x87 >> 10 & 3);
#else
    return (unsigned)fegetround();
#endif
}

/*
 * Thirteen integers and a double, updated between switches and needed after the last one: more
 * than the registers a call preserves, so the compiler keeps some in whatever registers the
 * jump does not declare clobbered. The other context does the same with other values, so a
 * register the jump fails to declare (inline) or to save (out of line) comes back changed.
 */
#define STEP(x, k) x = x * (2 * (k) + 3) + (k)
#define STEPS                                                                                      \
    STEP(a, 0), STEP(b, 1), STEP(c, 2), STEP(d, 3), STEP(e, 4), STEP(f, 5), STEP(g, 6),            \
        STEP(h, 7), STEP(i, 8), STEP(j, 9), STEP(k, 10), STEP(l, 11), STEP(m, 12),                 \
        x = x * 1.0001 + 1.0
#define INIT(s)                                                                                    \
    unsigned long a = (s) + 1, b = (s) + 2, c = (s) + 3, d = (s) + 4, e = (s) + 5, f = (s) + 6,    \
                  g = (s) + 7, h = (s) + 8, i = (s) + 9, j = (s) + 10, k = (s) + 11, l = (s) + 12, \
                  m = (s) + 13;                                                                    \
    double x = (double)(s)
#define STORE(out)                                                                                 \
    unsigned long *o = (out);                                                                      \
    o[0] = a, o[1] = b, o[2] = c, o[3] = d, o[4] = e, o[5] = f, o[6] = g, o[7] = h, o[8] = i,      \
    o[9] = j, o[10] = k, o[11] = l, o[12] = m;                                                     \
    memcpy(&o[13], &x, sizeof x)

/* The same arithmetic with no switch in between, under the side's rounding mode: what the
 * values must be. */
static void expected(unsigned long seed, int round, int rounds, unsigned long out[LIVE + 1])
{
    fesetround(round);
    INIT(seed);
    for (int r = 0; r < rounds; r++)
        STEPS;
    fesetround(FE_TONEAREST);
    STORE(out);
}

#define DEFINE_SIDE(id)                                                                            \
    static void side_##id(struct inline_test *t, int who, sw_ctx *from, sw_ctx *to)                \
    {                                                                                              \
        INIT(t->seed *(unsigned long)(who + 1));                                                   \
        if (t->backend->props.keeps_fp_control) fesetround(side_round[who]);                       \
        for (int r = 0; r < t->rounds; r++) {                                                      \
            sw_jump_direct(SW_KIND_##id, &t->backend, from, to);                                   \
            STEPS;                                                                                 \
        }                                                                                          \
        t->modes[who] = rounding_modes();                                                          \
        fesetround(FE_TONEAREST);                                                                  \
        STORE(t->got[who]);                                                                        \
    }                                                                                              \
    static void peer_##id(void *arg)                                                               \
    {                                                                                              \
        struct inline_test *t = arg;                                                               \
        side_##id(t, 1, &t->pair.peer, &t->pair.main);                                             \
    }                                                                                              \
    static void main_##id(struct inline_test *t)                                                   \
    {                                                                                              \
        check_pair_init(&t->pair, t->backend, 64 * 1024, peer_##id, t);                            \
        side_##id(t, 0, &t->pair.main, &t->pair.peer);                                             \
        sw_jump(&t->pair.main, &t->pair.peer); /* the peer's last steps, then it returns */        \
    }
SW_BACKENDS(DEFINE_SIDE)

int test_inline(const sw_backend *b, int argc, char **argv)
{
    struct inline_test t = {.backend = b, .rounds = argc > 0 ? atoi(argv[0]) : INLINE_ROUNDS};
    t.seed = 0x5eed;
#define RUN(id)                                                                                    \
    if (b == &sw_backend_##id) main_##id(&t);
    SW_BACKENDS(RUN)
#undef RUN
    ASSERT_EQ(sw_finished(&t.pair.peer), true);
    for (int who = 0; who < 2; who++) {
        unsigned long want[LIVE + 1];
        expected(0x5eedul * (unsigned long)(who + 1),
                 b->props.keeps_fp_control ? side_round[who] : FE_TONEAREST, t.rounds, want);
        for (int v = 0; v <= LIVE; v++)
            if (t.got[who][v] != want[v])
                check_fail(__FILE__, __LINE__,
                           "%s: value %d changed across the switches: %#lx, not %#lx",
                           who ? "peer" : "main", v, t.got[who][v], want[v]);
    }
    /* A backend that keeps the FP control state gives each side back its own mode; the others
     * leak it, so only those are checked (test-fpu.c checks the out-of-line jumps). */
    for (int who = 0; who < 2 && b->props.keeps_fp_control; who++) {
        fesetround(side_round[who]);
        unsigned want = rounding_modes();
        fesetround(FE_TONEAREST);
        if (t.modes[who] != want)
            check_fail(__FILE__, __LINE__, "%s: rounding modes %#x after the switches, not %#x",
                       who ? "peer" : "main", t.modes[who], want);
    }
    check_pair_destroy(&t.pair);
    printf("inline/%s: %d live values and a double intact in both contexts over %d rounds%s\n",
           b->name, LIVE, t.rounds,
           b->props.keeps_fp_control ? ", and each context's rounding modes" : "");
    return 0;
}
