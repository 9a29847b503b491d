/* switch_backends.h - each backend's table and its directly callable jump, for timed loops. */
#ifndef SWITCHYARD_SWITCH_BACKENDS_H
#define SWITCHYARD_SWITCH_BACKENDS_H

#include "switch.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef SWITCHYARD_HAVE_ASM
extern const sw_backend sw_backend_asm;
extern const sw_backend sw_backend_asm_nofpu;
void sw_asm_jump(sw_ctx *from, sw_ctx *to);
void sw_asm_nofpu_jump(sw_ctx *from, sw_ctx *to);
#endif

extern const sw_backend sw_backend_ucontext;
void sw_ucontext_jump(sw_ctx *from, sw_ctx *to);

#ifdef SWITCHYARD_HAVE_SETJMP
extern const sw_backend sw_backend_setjmp;
void sw_setjmp_jump(sw_ctx *from, sw_ctx *to);
#endif

#ifdef SWITCHYARD_HAVE_FCONTEXT
extern const sw_backend sw_backend_fcontext;

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
 * inline C++ wrappers do not pay. The data word carries `from`, so the resumed side can
 * store the handle of the context that just left; priv.words[0] tells a fresh context
 * (switch_fcontext.c) which sw_ctx it is.
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
