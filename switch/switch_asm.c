/* switch_asm.c - the hand-written asm backends (x86_64, aarch64): fresh contexts, operations
 * tables. */
#include "switch.h"
#include "switch_asm_frame.h"
#include "switch_backends.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The assembly addresses sw_ctx by the numbers in switch_asm_frame.h; they must match. */
#define WORD_AT(i) (offsetof(sw_ctx, priv.words) + (i) * sizeof(void *))
_Static_assert(offsetof(sw_ctx, sp) == SW_CTX_SP, "sw_ctx.sp is where the asm stores sp");
_Static_assert(offsetof(sw_ctx, priv) == SW_CTX_PRIV, "sw_ctx.priv moved: update the .S");
_Static_assert(offsetof(sw_ctx, priv.words) == SW_CTX_PRIV, "priv.words starts priv");
_Static_assert(sizeof(((sw_ctx *)0)->priv.words) >= SW_ASM_WORDS * sizeof(void *),
               "priv.words holds the whole save area");

#if defined(__x86_64__)
_Static_assert(WORD_AT(SW_ASM_WORD_RESUME) == SW_ASM_RESUME, "resume slot");
_Static_assert(WORD_AT(1) == SW_ASM_RBX && WORD_AT(2) == SW_ASM_RBP, "rbx, rbp slots");
_Static_assert(WORD_AT(3) == SW_ASM_R12 && WORD_AT(4) == SW_ASM_R13, "r12, r13 slots");
_Static_assert(WORD_AT(5) == SW_ASM_R14 && WORD_AT(6) == SW_ASM_R15, "r14, r15 slots");
_Static_assert(WORD_AT(SW_ASM_WORD_FP) == SW_ASM_MXCSR, "MXCSR in the FP slot's low half");
_Static_assert(SW_ASM_X87CW == SW_ASM_MXCSR + 4, "x87 CW after the 32-bit MXCSR");
_Static_assert(SW_ASM_WORD_FP + 1 == SW_ASM_WORDS, "the FP slot is the last");

#define ASM_ARCH        "x86_64 SysV"
#define ASM_SAVES       "callee-saved registers, MXCSR and x87 control word"
#define ASM_NOFPU_DROPS "MXCSR/x87 CW"
/* The resume address is stored as it is: x86_64 has no pointer authentication. */
#define ASM_SIGNS_RESUME false

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

/* The creator's MXCSR and x87 control word, into the FP slot. */
static void capture_fp_control(sw_ctx *ctx)
{
    uint32_t mxcsr;
    uint16_t x87_cw;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87_cw));
    char *fp = (char *)&ctx->priv.words[SW_ASM_WORD_FP];
    memcpy(fp, &mxcsr, sizeof mxcsr);
    memcpy(fp + sizeof mxcsr, &x87_cw, sizeof x87_cw);
}

#elif defined(__aarch64__)
_Static_assert(WORD_AT(SW_ASM_WORD_RESUME) == SW_ASM_LR, "x30 (resume) slot");
_Static_assert(WORD_AT(SW_ASM_WORD_X29) == SW_ASM_LR + 8, "x29 pairs with x30");
_Static_assert(WORD_AT(SW_ASM_WORD_X19) == SW_ASM_X19, "x19 slot");
_Static_assert(SW_ASM_X21 == SW_ASM_X19 + 16 && SW_ASM_X23 == SW_ASM_X21 + 16 &&
                   SW_ASM_X25 == SW_ASM_X23 + 16 && SW_ASM_X27 == SW_ASM_X25 + 16,
               "x19-x28 in consecutive pairs");
_Static_assert(WORD_AT(SW_ASM_WORD_D8) == SW_ASM_D8 && SW_ASM_D8 == SW_ASM_X27 + 16,
               "d8 right after x28");
_Static_assert(SW_ASM_D10 == SW_ASM_D8 + 16 && SW_ASM_D12 == SW_ASM_D10 + 16 &&
                   SW_ASM_D14 == SW_ASM_D12 + 16,
               "d8-d15 in consecutive pairs");
_Static_assert(WORD_AT(SW_ASM_WORD_FP) == SW_ASM_FPCR && SW_ASM_FPCR == SW_ASM_D14 + 16,
               "FPCR after d15");
_Static_assert(SW_ASM_WORD_FP + 1 == SW_ASM_WORDS, "the FP slot is the last");
/* ldp/stp take a signed 7-bit offset scaled by 8: at most 504 bytes. */
_Static_assert(SW_ASM_D14 <= 504, "every pair is reachable by ldp/stp");

#define ASM_ARCH        "aarch64 AAPCS64"
#define ASM_SAVES       "x19-x30, sp, d8-d15 and FPCR"
#define ASM_NOFPU_DROPS "FPCR"
/* Built with pac-ret, the jump signs the resume address it stores and checks the one it
 * loads (see the .S); on a CPU without pointer authentication the hints do nothing. */
#if defined(__ARM_FEATURE_PAC_DEFAULT)
#define ASM_SIGNS_RESUME true
#else
#define ASM_SIGNS_RESUME false
#endif

/*
 * The resume address as the jump's autiasp/autibsp will check it: signed with the key the
 * build uses and sp as the modifier (pacia1716/pacib1716 sign x17 with modifier x16). Both are
 * hint instructions, so on a core without pointer authentication the address stays as it is,
 * and so does the authentication in the jump.
 */
static void *sign_resume(void *pc, void *sp)
{
#if defined(__ARM_FEATURE_PAC_DEFAULT)
    register void *x17 __asm__("x17") = pc;
    register void *x16 __asm__("x16") = sp;
#if __ARM_FEATURE_PAC_DEFAULT & 2
    __asm__("hint #10" : "+r"(x17) : "r"(x16)); /* pacib1716 */
#else
    __asm__("hint #8" : "+r"(x17) : "r"(x16)); /* pacia1716 */
#endif
    return x17;
#else
    (void)sp;
    return pc;
#endif
}

/*
 * Prepare ctx so that the first jump "resumes" it in sw__asm_entry with zeroed callee-saved
 * registers (x29 = 0 ends frame-pointer walks). AAPCS64 wants sp 16-byte aligned at every
 * instruction and a call pushes nothing, so sp is simply the aligned top of the stack.
 */
static int fresh(sw_ctx *ctx, void *lo, size_t size)
{
    uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
    ctx->sp = (void *)top;
    memset(ctx->priv.words, 0, SW_ASM_WORDS * sizeof(void *));
    ctx->priv.words[SW_ASM_WORD_RESUME] = sign_resume((void *)sw__asm_entry, ctx->sp);
    return 0;
}

/* The creator's FPCR, into the FP slot. */
static void capture_fp_control(sw_ctx *ctx)
{
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    memcpy(&ctx->priv.words[SW_ASM_WORD_FP], &fpcr, sizeof fpcr);
}

#else
#error "switch_asm.c: no asm backend for this architecture"
#endif

static int asm_init_self(sw_ctx *self)
{
    /* Nothing to do: the first jump away from the running execution fills self->sp. */
    (void)self;
    return 0;
}

/*
 * A fresh context starts with its creator's floating-point control state, the choice that
 * Boost's make_fcontext and getcontext/makecontext make too (and what a new thread gets):
 * a program that sets, say, flush-to-zero once at start-up finds it in every fiber.
 */
static int asm_make(sw_ctx *ctx, void *lo, size_t size)
{
    if (fresh(ctx, lo, size) != 0) return -1;
    capture_fp_control(ctx);
    return 0;
}

static int asm_nofpu_make(sw_ctx *ctx, void *lo, size_t size)
{
    return fresh(ctx, lo, size);
}

/* sw_ctx.sp is the stack pointer as it will be after the suspended call returns (x86_64: the
 * return address below it is kept in priv.words; aarch64: a call pushes nothing and AAPCS64
 * has no red zone), so nothing under sp is live. A copied stack goes back to the same
 * addresses, so a resume address signed with sp (aarch64, pac-ret) still authenticates. */
static void *asm_live_sp(const sw_ctx *ctx)
{
    return ctx->sp;
}

const sw_backend sw_backend_asm = {
    .name = "asm",
    .summary = "hand-written " ASM_ARCH ": " ASM_SAVES,
    .props = {.keeps_fp_control = true,
              .switches_sigmask = false,
              .enters_kernel = false,
              .copy_stack = true,
              .signs_resume = ASM_SIGNS_RESUME,
              .shadow_stack = false},
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
    .summary = "asm without " ASM_NOFPU_DROPS ": fastest, wrong if a fiber changes FP modes",
    .props = {.keeps_fp_control = false,
              .switches_sigmask = false,
              .enters_kernel = false,
              .copy_stack = true,
              .signs_resume = ASM_SIGNS_RESUME,
              .shadow_stack = false},
    .init_self = asm_init_self,
    .make = asm_nofpu_make,
    .jump = sw_asm_nofpu_jump,
    .live_sp = asm_live_sp,
    .priv_size = SW_ASM_WORDS * sizeof(void *),
};
