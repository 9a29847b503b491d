/* fiber_hop.h - fb_yield with the ring hop inline at its call site, for the compiler-assisted
 * switch backends. */
#ifndef SWITCHYARD_FIBER_HOP_H
#define SWITCHYARD_FIBER_HOP_H

#include "fiber.h"
#include "fiber_layout.h"

/*
 * The compiler-assisted backends (switch_cc.h) save only what is live across a switch, and only
 * where their jump is inlined into the code around it. fb_yield is a call: behind it the switch
 * must keep every callee-saved register of fb_yield's caller, which is what the asm backend
 * does, so a ring hop through fb_yield costs about what asm's does with any backend.
 *
 * fb_yield_inline is the same hop written into the caller. A file asks for it as it asks for
 * the inline jump, by defining SW_JUMP_INLINE_CC before its includes. When the runtime runs a
 * cc backend in guarded mode, in ring mode, within a pass and with a fiber queued, the rotation
 * of fb_yield and the switch happen here, and the calling function saves the registers it
 * needs around the switch once, in its prologue, not on every hop. Anything else (another
 * backend, copy mode, star, the end of a pass, an empty queue, outside a fiber) calls fb_yield,
 * which does what this would have and more. ASan builds always call fb_yield: their switches
 * carry ASan's fiber annotations.
 *
 * A hop made here resumes a fiber wherever it last switched: in fb_yield, fb_park, another
 * inline site or its entry. All of them use the backend's one protocol (switch_cc.h: the stack
 * pointer, a resume address and the frame pointer in sw_ctx), so they mix freely.
 */
extern __thread fb_runtime *fb__rt_tls __attribute__((tls_model("local-exec")));

#if defined(SW_JUMP_INLINE_CC) && defined(SWITCHYARD_SWITCH_CC_H) && !defined(SWITCHYARD_ASAN) &&  \
    (defined(__x86_64__) || defined(__aarch64__))
static inline __attribute__((always_inline)) void fb_yield_inline(void)
{
    fb_runtime *rt = fb__rt_tls;
    fiber *self = rt ? rt->current : NULL;
    fiber *next = self ? rt->head : NULL;
    /* pass_left > 1: fb_yield's `--pass_left > 0`, the pass not over after this hop. */
    if (__builtin_expect(next && (rt->kind == SW_KIND_cc_nofpu || rt->kind == SW_KIND_cc) &&
                             rt->policy == FB_RING && rt->pass_left > 1,
                         1)) {
        /* Each counter stored on its own, as the rotation's fields are (fiber_layout.h). */
        FB__STORE(rt->pass_left, rt->pass_left - 1);
        FB__STORE(rt->stats.hops, rt->stats.hops + 1);
        FB__STORE(rt->stats.switches, rt->stats.switches + 1);
        fb__ring_rotate(rt, self, next);
        if (rt->kind == SW_KIND_cc_nofpu)
            sw_cc_nofpu_jump(&self->ctx, &next->ctx);
        else
            sw_cc_jump(&self->ctx, &next->ctx);
        return;
    }
    fb_yield();
}
#else
static inline void fb_yield_inline(void)
{
    fb_yield();
}
#endif

#endif
