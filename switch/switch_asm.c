/* switch_asm.c - the hand-written x86_64 backends: fresh contexts and their operations tables. */
#include "switch.h"
#include "switch_asm_frame.h"
#include "switch_backends.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The assembly addresses sw_ctx by the numbers in switch_asm_frame.h; they must match. */
#define WORD_AT(i) (offsetof(sw_ctx, priv.words) + (i) * sizeof(void *))
_Static_assert(offsetof(sw_ctx, sp) == SW_CTX_SP, "sw_ctx.sp is where the asm stores rsp");
_Static_assert(offsetof(sw_ctx, priv) == SW_CTX_PRIV, "sw_ctx.priv moved: update the .S");
_Static_assert(offsetof(sw_ctx, priv.words) == SW_CTX_PRIV, "priv.words starts priv");
_Static_assert(WORD_AT(SW_ASM_WORD_RESUME) == SW_ASM_RESUME, "resume slot");
_Static_assert(WORD_AT(1) == SW_ASM_RBX && WORD_AT(2) == SW_ASM_RBP, "rbx, rbp slots");
_Static_assert(WORD_AT(3) == SW_ASM_R12 && WORD_AT(4) == SW_ASM_R13, "r12, r13 slots");
_Static_assert(WORD_AT(5) == SW_ASM_R14 && WORD_AT(6) == SW_ASM_R15, "r14, r15 slots");
_Static_assert(WORD_AT(SW_ASM_WORD_FP) == SW_ASM_MXCSR, "MXCSR in the FP slot's low half");
_Static_assert(SW_ASM_X87CW == SW_ASM_MXCSR + 4, "x87 CW after the 32-bit MXCSR");
_Static_assert(sizeof(((sw_ctx *)0)->priv.words) >= SW_ASM_WORDS * sizeof(void *),
               "priv.words holds the whole save area");

static int asm_init_self(sw_ctx *self)
{
    /* Nothing to do: the first jump away from the running execution fills self->sp. */
    (void)self;
    return 0;
}

/*
 * Prepare ctx so that the first jump "resumes" it in sw__asm_entry with zeroed callee-saved
 * registers. Its stack starts with one zero word where a return address would be:
 * sw__asm_entry then begins with rsp 8 below a 16-byte boundary, like any function, and
 * backtraces end there.
 */
static int fresh(sw_ctx *ctx, void *lo, size_t size)
{
    uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
    void **ret_slot = (void **)(top - 8);
    *ret_slot = NULL;
    ctx->sp = ret_slot;
    memset(ctx->priv.words, 0, SW_ASM_WORDS * sizeof(void *));
    ctx->priv.words[SW_ASM_WORD_RESUME] = (void *)sw__asm_entry;
    return 0;
}

/*
 * A fresh context starts with its creator's floating-point control state, the choice that
 * Boost's make_fcontext and getcontext/makecontext make too (and what a new thread gets):
 * a program that sets, say, flush-to-zero once at start-up finds it in every fiber.
 */
static int asm_make(sw_ctx *ctx, void *lo, size_t size)
{
    uint32_t mxcsr;
    uint16_t x87_cw;
    if (fresh(ctx, lo, size) != 0) return -1;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87_cw));
    char *fp = (char *)&ctx->priv.words[SW_ASM_WORD_FP];
    memcpy(fp, &mxcsr, sizeof mxcsr);
    memcpy(fp + sizeof mxcsr, &x87_cw, sizeof x87_cw);
    return 0;
}

static int asm_nofpu_make(sw_ctx *ctx, void *lo, size_t size)
{
    return fresh(ctx, lo, size);
}

/* sw_ctx.sp is rsp as it will be after the suspended call returns; the return address below
 * it is kept in priv.words, so nothing under sp is live. */
static void *asm_live_sp(const sw_ctx *ctx)
{
    return ctx->sp;
}

const sw_backend sw_backend_asm = {
    .name = "asm",
    .summary = "hand-written x86_64 SysV: callee-saved registers, MXCSR and x87 control word",
    .props = {.keeps_fp_control = true,
              .switches_sigmask = false,
              .enters_kernel = false,
              .copy_stack = true},
    .init_self = asm_init_self,
    .make = asm_make,
    .jump = sw_asm_jump,
    .live_sp = asm_live_sp,
    .priv_size = SW_ASM_WORDS * sizeof(void *),
};

/* Wrong for fibers that change the rounding mode, exception masks or FTZ/DAZ: the change
 * leaks into whichever context runs next on the thread. */
const sw_backend sw_backend_asm_nofpu = {
    .name = "asm-nofpu",
    .summary = "asm without MXCSR/x87 CW: fastest, wrong if a fiber changes FP modes",
    .props = {.keeps_fp_control = false,
              .switches_sigmask = false,
              .enters_kernel = false,
              .copy_stack = true},
    .init_self = asm_init_self,
    .make = asm_nofpu_make,
    .jump = sw_asm_nofpu_jump,
    .live_sp = asm_live_sp,
    .priv_size = SW_ASM_WORDS * sizeof(void *),
};
