/* switch_cc_pnone.h - the cc-pnone backend's jump: a call of a switch function with clang's
 * preserve_none calling convention (x86_64). */
#ifndef SWITCHYARD_SWITCH_CC_PNONE_H
#define SWITCHYARD_SWITCH_CC_PNONE_H

#include "switch.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Under preserve_none the callee keeps only rsp and rbp, so the caller, not the switch, saves
 * whatever it has live, as around the cc backend's inline asm; unlike that asm, the switch is
 * an ordinary out-of-line function, and a pointer to it would keep the benefit if the pointer's
 * type carries the attribute (sw__cc_pnone_fn). Arguments arrive in r12 and r13 (clang 19).
 * The operations table's jump (sw__cc_pnone_jump_call) is a plain C function around the call,
 * whose prologue saves every callee-saved register: correct, and without the benefit. Like the
 * cc jumps, the direct call is used only where SW_JUMP_INLINE_CC asks for it (switch_cc.h).
 */
typedef __attribute__((preserve_none)) void sw__cc_pnone_fn(sw_ctx *from, sw_ctx *to);
__attribute__((preserve_none)) void sw__cc_pnone_switch(sw_ctx *from, sw_ctx *to);
void sw__cc_pnone_jump_call(sw_ctx *from, sw_ctx *to);

#if defined(SW_JUMP_INLINE_CC)
static inline __attribute__((always_inline)) void sw_cc_pnone_jump(sw_ctx *from, sw_ctx *to)
{
    sw__cc_pnone_switch(from, to);
}
#else
static inline void sw_cc_pnone_jump(sw_ctx *from, sw_ctx *to)
{
    sw__cc_pnone_jump_call(from, to);
}
#endif

#ifdef __cplusplus
}
#endif
#endif
