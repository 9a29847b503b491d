/* test-fpu.c - rounding mode and FP control state (MXCSR, x87 CW; FPCR) stay per context iff
 * documented so. */
#include "check.h"

#include <fenv.h>
#include <stdio.h>

#if defined(__x86_64__)
/* MXCSR bits 6-15 are control (DAZ, exception masks, rounding, FTZ); bits 0-5 are sticky
 * status flags that any arithmetic may set, so they are left out of the comparison. */
#define MXCSR_CONTROL 0xffc0u
#define MXCSR_DAZ     0x0040u
#define MXCSR_FTZ     0x8000u
/* x87 control word: exception masks (0-5), precision (8-9), rounding (10-11). */
#define X87_CONTROL 0x0f3fu

#define CTL0_NAME "mxcsr"
#define CTL1_NAME "x87"

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

/* The bits fenv does not reach: MXCSR's flush-to-zero and denormals-are-zero, x87 precision
 * (0 single, 2 double, 3 extended). */
static void set_extra(bool flush, unsigned precision)
{
    unsigned m = get_mxcsr() & ~(MXCSR_FTZ | MXCSR_DAZ);
    set_mxcsr(flush ? m | MXCSR_FTZ | MXCSR_DAZ : m);
    set_x87((get_x87() & ~0x0300u) | precision << 8);
}

static void get_control(unsigned ctl[2])
{
    ctl[0] = get_mxcsr();
    ctl[1] = get_x87();
}

#elif defined(__aarch64__)
/* FPCR's mode bits, which AAPCS64 makes callee-saved: AHP (26), DN (25), FZ (24), RMode
 * (22-23), FZ16 (19). The trap-enable bits are left out: most cores (and qemu) hold them at
 * zero. */
#define FPCR_AHP     (1u << 26)
#define FPCR_DN      (1u << 25)
#define FPCR_FZ      (1u << 24)
#define FPCR_FZ16    (1u << 19)
#define FPCR_CONTROL (FPCR_AHP | FPCR_DN | FPCR_FZ | (3u << 22) | FPCR_FZ16)

#define CTL0_NAME "fpcr"
#define CTL1_NAME "-"

static unsigned get_fpcr(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, fpcr" : "=r"(v));
    return (unsigned)v & FPCR_CONTROL;
}

static void set_fpcr(unsigned v)
{
    uint64_t w = v;
    __asm__ volatile("msr fpcr, %0" : : "r"(w));
}

/* The bits fenv does not reach: flush-to-zero with default NaN, and (for any precision but
 * the default 3) the alternative half-precision format with half-precision flush-to-zero. */
static void set_extra(bool flush, unsigned precision)
{
    unsigned v = get_fpcr() & ~(FPCR_FZ | FPCR_DN | FPCR_AHP | FPCR_FZ16);
    if (flush) v |= FPCR_FZ | FPCR_DN;
    if (precision != 3) v |= FPCR_AHP | FPCR_FZ16;
    set_fpcr(v);
}

static void get_control(unsigned ctl[2])
{
    ctl[0] = get_fpcr();
    ctl[1] = 0;
}
#endif

struct fp_state {
    int round; /* fegetround() */
    unsigned ctl[2];
};

static struct fp_state observe(void)
{
    struct fp_state s = {.round = fegetround()};
    get_control(s.ctl);
    return s;
}

/* Install a state: the rounding mode through fenv (which sets every unit's), then the
 * architecture's extra bits that fenv does not reach. */
static struct fp_state install(int round, bool flush, unsigned precision)
{
    ASSERT_EQ(fesetround(round), 0);
    set_extra(flush, precision);
    return observe();
}

static bool same(struct fp_state a, struct fp_state b)
{
    return a.round == b.round && a.ctl[0] == b.ctl[0] && a.ctl[1] == b.ctl[1];
}

/* Each observation is made by the context that just got control back: "kept" if it finds its
 * own state, "leaked" if it finds the state the other context left; anything else fails. */
static int verdict(const char *what, struct fp_state seen, struct fp_state own,
                   struct fp_state other)
{
    printf("%-34s round %#x " CTL0_NAME " %#06x " CTL1_NAME " %#06x (own %#06x/%#06x, other "
           "%#06x/%#06x)\n",
           what, (unsigned)seen.round, seen.ctl[0], seen.ctl[1], own.ctl[0], own.ctl[1],
           other.ctl[0], other.ctl[1]);
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
