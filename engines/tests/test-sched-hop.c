/* test-sched-hop.c - the inline ring hop (fiber_hop.h), in a file built as its callers are:
 * with SW_JUMP_INLINE_CC, so that the hop is inline wherever the runtime allows it. */
#define SW_JUMP_INLINE_CC
#include "fiber_hop.h"
#include "test-sched.h"

#include <string.h>

/*
 * test-sched links with -Wl,--wrap=fb_yield: every call of fb_yield from outside fiber.c comes
 * here first, so the case can tell an inline hop (no call) from its fallback (a call).
 */
void __real_fb_yield(void);
void __wrap_fb_yield(void);
static long yield_calls;

void __wrap_fb_yield(void)
{
    yield_calls++;
    __real_fb_yield();
}

/* ---- inline_hop: inline and called hops mixed keep round-robin order and live values ----- */

enum { HOP_N = 6, HOP_M = 300, HOP_CALLED_EVERY = 10 };
static int hop_trace[HOP_N * HOP_M];
static int hop_traced;

/* Whether fb_yield_inline hops without a call under this run's configuration (fiber_hop.h). */
static bool hops_inline(void)
{
#if defined(SWITCHYARD_ASAN)
    return false;
#else
    const char *b = config.backend->name;
    return config.policy == FB_RING && !copy_mode &&
           (strcmp(b, "cc") == 0 || strcmp(b, "cc-nofpu") == 0);
#endif
}

static void hopper(void *arg)
{
    long id = (long)arg;
    /* More values live across each hop than there are callee-saved registers, integer and
     * floating point, changed after every hop: the compiler must keep every one of them
     * across the switch, which declares all registers clobbered. */
    long a = id + 1, b = 2 * id + 3, c = 3 * id + 5, d = 5 * id + 7, e = 7 * id + 11;
    long f = 11 * id + 13, g = 13 * id + 17, h = 17 * id + 19;
    double x = (double)id + 0.5, y = (double)id * 0.25;
    for (int i = 0; i < HOP_M; i++) {
        hop_trace[hop_traced++] = (int)id;
        if (i % HOP_CALLED_EVERY == HOP_CALLED_EVERY - 1)
            fb_yield();
        else
            fb_yield_inline();
        a += 1, b += 2, c += 3, d += 5, e += 7, f += 11, g += 13, h += 17;
        x += 1.0, y += 0.5;
    }
    ASSERT_EQ(a, id + 1 + HOP_M);
    ASSERT_EQ(b, 2 * id + 3 + 2 * HOP_M);
    ASSERT_EQ(c, 3 * id + 5 + 3 * HOP_M);
    ASSERT_EQ(d, 5 * id + 7 + 5 * HOP_M);
    ASSERT_EQ(e, 7 * id + 11 + 7 * HOP_M);
    ASSERT_EQ(f, 11 * id + 13 + 11 * HOP_M);
    ASSERT_EQ(g, 13 * id + 17 + 13 * HOP_M);
    ASSERT_EQ(h, 17 * id + 19 + 17 * HOP_M);
    ASSERT_TRUE(x == (double)id + 0.5 + HOP_M);
    ASSERT_TRUE(y == (double)id * 0.25 + 0.5 * HOP_M);
    ASSERT_TRUE(fb_self() != NULL);
}

void test_inline_hop(void)
{
    fb_runtime *rt = new_runtime();
    for (long i = 0; i < HOP_N; i++)
        ASSERT_TRUE(fb_spawn(rt, hopper, (void *)i));
    yield_calls = 0;
    ASSERT_EQ(fb_run(rt), 0);
    ASSERT_EQ(hop_traced, HOP_N * HOP_M);
    for (int i = 0; i < hop_traced; i++)
        ASSERT_EQ(hop_trace[i], i % HOP_N);
    fb_stats st = stats_of(rt);
    ASSERT_EQ(st.hops, HOP_N * HOP_M);
    ASSERT_EQ(st.finished, HOP_N);
    if (config.policy == FB_RING &&
        !copy_mode) /* one switch per hop, and each fiber's entry and exit */
        ASSERT_EQ(st.switches, HOP_N * HOP_M + 2 * HOP_N);
    /* The called hops, and the inline ones too wherever the runtime cannot hop inline. A ring
     * without a poller never ends its pass, and every hop here finds a fiber queued. */
    long called = HOP_N * (HOP_M / HOP_CALLED_EVERY);
    long expect = hops_inline() ? called : HOP_N * HOP_M;
    printf("%s/%s: %ld of %d hops called fb_yield (inline expected: %s)\n",
           fb_policy_name(config.policy), config.backend->name, yield_calls, HOP_N * HOP_M,
           hops_inline() ? "yes" : "no");
    ASSERT_EQ(yield_calls, expect);
    fb_runtime_free(rt);
}
