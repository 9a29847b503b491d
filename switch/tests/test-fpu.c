/* test-fpu.c - rounding mode, MXCSR and x87 control word stay per context iff documented so. */
#include "check.h"

#include <fenv.h>
#include <stdio.h>

/* MXCSR bits 6-15 are control (DAZ, exception masks, rounding, FTZ); bits 0-5 are sticky
 * status flags that any arithmetic may set, so they are left out of the comparison. */
#define MXCSR_CONTROL 0xffc0u
#define MXCSR_DAZ     0x0040u
#define MXCSR_FTZ     0x8000u
/* x87 control word: exception masks (0-5), precision (8-9), rounding (10-11). */
#define X87_CONTROL 0x0f3fu

static unsigned get_mxcsr(void)
{
    unsigned v;
    __asm__ volatile("stmxcsr %0" : "=m"(v));
    return v & MXCSR_CONTROL;
}

static void set_mxcsr(unsigned v)
{
    __asm__ volatile("ldmxcsr %0" : : "m"(v));
}

static unsigned get_x87(void)
{
    unsigned short v;
    __asm__ volatile("fnstcw %0" : "=m"(v));
    return v & X87_CONTROL;
}

static void set_x87(unsigned v)
{
    unsigned short w = (unsigned short)v;
    __asm__ volatile("fldcw %0" : : "m"(w));
}

struct fp_state {
    int round; /* fegetround() */
    unsigned mxcsr, x87;
};

/* Install a state: the rounding mode through fenv (which sets both units), then the extra
 * bits fenv does not reach: MXCSR's flush-to-zero and denormals-are-zero, x87 precision. */
static struct fp_state install(int round, bool ftz_daz, unsigned x87_precision)
{
    ASSERT_EQ(fesetround(round), 0);
    unsigned m = get_mxcsr() & ~(MXCSR_FTZ | MXCSR_DAZ);
    set_mxcsr(ftz_daz ? m | MXCSR_FTZ | MXCSR_DAZ : m);
    set_x87((get_x87() & ~0x0300u) | x87_precision << 8);
    struct fp_state s = {fegetround(), get_mxcsr(), get_x87()};
    return s;
}

static struct fp_state observe(void)
{
    struct fp_state s = {fegetround(), get_mxcsr(), get_x87()};
    return s;
}

static bool same(struct fp_state a, struct fp_state b)
{
    return a.round == b.round && a.mxcsr == b.mxcsr && a.x87 == b.x87;
}

/* Each observation is made by the context that just got control back: "kept" if it finds its
 * own state, "leaked" if it finds the state the other context left; anything else fails. */
static int verdict(const char *what, struct fp_state seen, struct fp_state own,
                   struct fp_state other)
{
    printf("%-34s round %#x mxcsr %#06x x87 %#06x (own %#06x/%#06x, other %#06x/%#06x)\n", what,
           (unsigned)seen.round, seen.mxcsr, seen.x87, own.mxcsr, own.x87, other.mxcsr, other.x87);
    if (same(seen, own)) return 1;
    if (same(seen, other)) return 0;
    check_fail(__FILE__, __LINE__, "%s: the state is neither its own nor the other context's",
               what);
}

struct fpu {
    check_pair pair;
    struct fp_state main1, main2, peer1, peer2;
    int kept_peer;
};

static void peer_entry(void *arg)
{
    struct fpu *f = arg;
    f->peer1 = install(FE_UPWARD, true, 0 /* single precision */);
    sw_jump(&f->pair.peer, &f->pair.main);
    f->kept_peer = verdict("peer after main changed its state", observe(), f->peer1, f->main2);
    /* A last change, so main can tell its own state from ours after the finishing switch. */
    f->peer2 = install(FE_DOWNWARD, false, 2 /* double precision */);
}

int test_fpu(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    struct fpu f = {.kept_peer = -1};
    f.main1 = install(FE_TONEAREST, false, 3 /* extended precision: the default */);
    check_pair_init(&f.pair, b, 64 * 1024, peer_entry, &f);

    sw_jump(&f.pair.main, &f.pair.peer);
    int kept_main1 = verdict("main after the peer changed its", observe(), f.main1, f.peer1);
    f.main2 = install(FE_TOWARDZERO, true, 2);
    sw_jump(&f.pair.main, &f.pair.peer);
    ASSERT_EQ(sw_finished(&f.pair.peer), true);
    int kept_main2 = verdict("main after the peer finished", observe(), f.main2, f.peer2);

    install(FE_TONEAREST, false, 3);
    printf("%s: documented keeps_fp_control=%d, observed kept=%d,%d,%d\n", b->name,
           b->props.keeps_fp_control, kept_main1, f.kept_peer, kept_main2);
    /* All three observations must agree with the documented property: a backend that starts
     * keeping the state, or stops, fails either way. */
    ASSERT_EQ(kept_main1, b->props.keeps_fp_control);
    ASSERT_EQ(f.kept_peer, b->props.keeps_fp_control);
    ASSERT_EQ(kept_main2, b->props.keeps_fp_control);
    check_pair_destroy(&f.pair);
    return 0;
}
