/* switch_fcontext.h - the fcontext backend's jump, inline so timed loops switch inside it. */
#ifndef SWITCHYARD_SWITCH_FCONTEXT_H
#define SWITCHYARD_SWITCH_FCONTEXT_H

#include "switch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Boost.Context's jump, a plain C symbol in libboost_context (Boost 1.74's transfer_t). */
typedef struct sw__fcontext_transfer {
    void *fctx;
    void *data;
} sw__fcontext_transfer;
sw__fcontext_transfer jump_fcontext(void *to, void *vp);

/*
 * Inline, unlike the other jumps: the switch happens inside jump_fcontext, which returns
 * into a different context than the one that called it. Wrapped in a function of our own,
 * the wrapper's `ret` would then go to an address the return-stack predictor does not
 * expect, a misprediction on every switch (about 12 instead of 6 ns here) that Boost's own
 * inline C++ wrappers do not pay.
 *
 * jump_fcontext also resumes the other side with an indirect `jmp`, so a plain `call` of it
 * would leave one return-stack entry behind on every switch, and the next `ret` of the resumed
 * side (leaving fb_yield, say) would be mispredicted. The call is therefore made by hand: push
 * the resume address and `jmp`, as the asm backend's callers reach it by a tail call. The red
 * zone below the stack pointer is stepped over first, since the compiler may keep data there.
 * jump_fcontext preserves the callee-saved registers and the FP control state; everything
 * else is clobbered, as across a call. The data word carries `from`, so the resumed side can
 * store the handle of the context that just left; priv.words[0] tells a fresh context
 * (switch_fcontext.c) which sw_ctx it is.
 */
#if defined(__x86_64__)
static inline void sw_fcontext_jump(sw_ctx *from, sw_ctx *to)
{
    from->priv.words[0] = to;
    void *fctx, *data, *target = to->sp, *arg = from;
    __asm__ volatile("sub $128, %%rsp\n\t"
                     "lea 1f(%%rip), %%rax\n\t"
                     "push %%rax\n\t"
                     "jmp jump_fcontext@PLT\n"
                     "1:\n\t"
                     "add $128, %%rsp"
                     : "=a"(fctx), "=d"(data), "+D"(target), "+S"(arg)
                     :
                     : "rcx", "r8", "r9", "r10", "r11", "memory", "cc", "xmm0", "xmm1", "xmm2",
                       "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
                       "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)", "st(3)", "st(4)",
                       "st(5)", "st(6)", "st(7)");
    ((sw_ctx *)data)->sp = fctx;
}
#else
/*
 * Elsewhere (aarch64) Boost's jump_fcontext resumes the other side with `ret`, so a plain
 * call keeps the return-stack predictor balanced and the hand-made call above is not needed.
 */
static inline void sw_fcontext_jump(sw_ctx *from, sw_ctx *to)
{
    from->priv.words[0] = to;
    sw__fcontext_transfer t = jump_fcontext(to->sp, from);
    ((sw_ctx *)t.data)->sp = t.fctx;
}
#endif

#ifdef __cplusplus
}
#endif
#endif
