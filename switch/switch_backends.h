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
void sw_fcontext_jump(sw_ctx *from, sw_ctx *to);
#endif

#ifdef __cplusplus
}
#endif
#endif
