/* switch_cc.c - the compiler-assisted backends (cc, cc-nofpu): fresh contexts, operations tables.
 * The jumps are inline, in switch_cc.h. */
#define SW_JUMP_INLINE_CC /* the out-of-line copies below are the asm itself */
#include "switch.h"
#include "switch_backends.h"
#include "switch_cc.h"

#include <stdint.h>
#include <string.h>

_Static_assert(offsetof(sw_ctx, sp) == 0, "sw_ctx.sp first");
_Static_assert(sizeof(((sw_ctx *)0)->priv.words) >= 3 * sizeof(void *), "three words of priv");

/* Where a fresh context resumes: the jump left the entered sw_ctx in rsi (x1). */
void sw__cc_entry(void);

#if defined(__x86_64__)
/* Its sp points at a zero word where a return address would be (rsp + 8 is 16-byte aligned, as
 * at any function's first instruction, and backtraces end there); rbp is 0. */
__asm__(".text\n"
        ".globl sw__cc_entry\n"
        ".type sw__cc_entry, @function\n"
        ".p2align 4\n"
        "sw__cc_entry:\n\t"
        ".cfi_startproc\n\t"
        ".cfi_undefined rip\n\t"
        "movq %rsi, %rdi\n\t"
        "andq $-16, %rsp\n\t"
        "call sw__run@PLT\n\t"
        "ud2\n\t"
        ".cfi_endproc\n"
        ".size sw__cc_entry, .-sw__cc_entry\n");

#define CC_ARCH  "x86_64"
#define CC_FP    "MXCSR/x87 CW"
#define RED_ZONE 128 /* System V: below rsp, usable by leaf code */

static void *fresh_sp(void *lo, size_t size)
{
    uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
    void **ret_slot = (void **)(top - 8);
    *ret_slot = NULL;
    return ret_slot;
}

static void capture_fp_control(sw_ctx *ctx)
{
    uint32_t mxcsr;
    uint16_t x87_cw;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87_cw));
    char *fp = (char *)&ctx->priv.words[2];
    memcpy(fp, &mxcsr, sizeof mxcsr);
    memcpy(fp + sizeof mxcsr, &x87_cw, sizeof x87_cw);
}

#elif defined(__aarch64__)
/* Reached by `br`: a BTI landing pad for jumps first (a no-op without BTI). sp is the aligned
 * top of the stack; x29 = 0 ends frame walks. */
__asm__(".text\n"
        ".globl sw__cc_entry\n"
        ".type sw__cc_entry, %function\n"
        ".p2align 4\n"
        "sw__cc_entry:\n\t"
        ".cfi_startproc\n\t"
        ".cfi_undefined x30\n\t"
        "hint #36\n\t"
        "mov x0, x1\n\t"
        "bl sw__run\n\t"
        "brk #0\n\t"
        ".cfi_endproc\n"
        ".size sw__cc_entry, .-sw__cc_entry\n");

#define CC_ARCH  "aarch64"
#define CC_FP    "FPCR"
#define RED_ZONE 0 /* AAPCS64 has none */

static void *fresh_sp(void *lo, size_t size)
{
    return (void *)(((uintptr_t)lo + size) & ~(uintptr_t)15);
}

static void capture_fp_control(sw_ctx *ctx)
{
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    memcpy(&ctx->priv.words[2], &fpcr, sizeof fpcr);
}

#else
#error "switch_cc.c: no compiler-assisted switch for this architecture"
#endif

static int cc_init_self(sw_ctx *self)
{
    (void)self; /* the first jump away fills it */
    return 0;
}

static int cc_nofpu_make(sw_ctx *ctx, void *lo, size_t size)
{
    ctx->sp = fresh_sp(lo, size);
    ctx->priv.words[0] = (void *)sw__cc_entry;
    ctx->priv.words[1] = NULL; /* the frame pointer: frame walks end here */
    ctx->priv.words[2] = NULL;
    return 0;
}

/* A fresh context starts with its creator's FP control state, as with the asm backend. */
int sw__cc_make(sw_ctx *ctx, void *lo, size_t size)
{
    cc_nofpu_make(ctx, lo, size);
    capture_fp_control(ctx);
    return 0;
}

/* The compiler may have left data in the red zone of the function that switched. */
void *sw__cc_live_sp(const sw_ctx *ctx)
{
    return (char *)ctx->sp - RED_ZONE;
}

/*
 * The out-of-line copies (the operations tables' jumps, and what the fiber runtime calls) save
 * every callee-saved register, since the switch clobbers them all: correct, and without the
 * inline form's benefit.
 *
 * On x86_64 they are written out here rather than compiled from the inline asm, for their
 * return: a C function would end in `ret`, which the return-stack predictor expects to go back
 * to the call that entered this copy, while it goes back to the call that suspended the
 * context being resumed, in another fiber. Wherever the two calls differ (star: the scheduler's
 * call site and the fiber's), every switch would be mispredicted, and the chain of returns
 * after it too (switch/README.md has the cost). So the resumed copy pops its return address
 * and jumps there, as the asm backend does (switch_x86_64_sysv_elf_gas.S). The layout is
 * switch_cc.h's (checked below); the five registers go on the suspended stack, below the return
 * address.
 */
#if defined(__x86_64__)
_Static_assert(SW__CC_RESUME == 0x48 && SW__CC_FP == 0x50 && SW__CC_FPCTL == 0x58,
               "the out-of-line copies' offsets");

#define CC_CALL(name, fp_save, fp_load)                                                            \
    __asm__(".text\n"                                                                              \
            ".globl " name "\n"                                                                    \
            ".type " name ", @function\n"                                                          \
            ".p2align 6\n" name ":\n\t"                                                            \
            ".cfi_startproc\n\t"                                                                   \
            "pushq %rbx\n\t"                                                                       \
            ".cfi_adjust_cfa_offset 8\n\t"                                                         \
            "pushq %r12\n\t"                                                                       \
            ".cfi_adjust_cfa_offset 8\n\t"                                                         \
            "pushq %r13\n\t"                                                                       \
            ".cfi_adjust_cfa_offset 8\n\t"                                                         \
            "pushq %r14\n\t"                                                                       \
            ".cfi_adjust_cfa_offset 8\n\t"                                                         \
            "pushq %r15\n\t"                                                                       \
            ".cfi_adjust_cfa_offset 8\n\t"                                                         \
            "leaq 1f(%rip), %rax\n\t"                                                              \
            "movq %rsp, 0x00(%rdi)\n\t"                                                            \
            "movq %rax, 0x48(%rdi)\n\t"                                                            \
            "movq %rbp, 0x50(%rdi)\n\t" fp_save "movq 0x48(%rsi), %rax\n\t"                        \
            "movq 0x00(%rsi), %rsp\n\t" fp_load "movq 0x50(%rsi), %rbp\n\t"                        \
            "jmp *%rax\n"                                                                          \
            "1:\n\t"                                                                               \
            "popq %r15\n\t"                                                                        \
            ".cfi_adjust_cfa_offset -8\n\t"                                                        \
            "popq %r14\n\t"                                                                        \
            ".cfi_adjust_cfa_offset -8\n\t"                                                        \
            "popq %r13\n\t"                                                                        \
            ".cfi_adjust_cfa_offset -8\n\t"                                                        \
            "popq %r12\n\t"                                                                        \
            ".cfi_adjust_cfa_offset -8\n\t"                                                        \
            "popq %rbx\n\t"                                                                        \
            ".cfi_adjust_cfa_offset -8\n\t"                                                        \
            "popq %rcx\n\t"                                                                        \
            ".cfi_adjust_cfa_offset -8\n\t"                                                        \
            ".cfi_register rip, rcx\n\t"                                                           \
            "jmp *%rcx\n\t"                                                                        \
            ".cfi_endproc\n"                                                                       \
            ".size " name ", .-" name "\n")

CC_CALL("sw__cc_jump_call", "stmxcsr 0x58(%rdi)\n\tfnstcw 0x5c(%rdi)\n\t",
        "ldmxcsr 0x58(%rsi)\n\tmovzwl 0x5c(%rsi), %ecx\n\tcmpw 0x5c(%rdi), %cx\n\t"
        "je 2f\n\tfldcw 0x5c(%rsi)\n2:\n\t");
CC_CALL("sw__cc_nofpu_jump_call", "", "");
#undef CC_CALL

#else
void sw__cc_jump_call(sw_ctx *from, sw_ctx *to)
{
    sw_cc_jump(from, to);
}

void sw__cc_nofpu_jump_call(sw_ctx *from, sw_ctx *to)
{
    sw_cc_nofpu_jump(from, to);
}
#endif

const sw_backend sw_backend_cc = {
    .name = "cc",
    .summary = "compiler-assisted inline " CC_ARCH " switch: only live registers saved, and " CC_FP,
    .props = {.keeps_fp_control = true,
              .switches_sigmask = false,
              .enters_kernel = false,
              .copy_stack = true,
              .shadow_stack = false},
    .init_self = cc_init_self,
    .make = sw__cc_make,
    .jump = sw__cc_jump_call,
    .live_sp = sw__cc_live_sp,
    .priv_size = 3 * sizeof(void *),
};

const sw_backend sw_backend_cc_nofpu = {
    .name = "cc-nofpu",
    .summary = "cc without " CC_FP ": wrong if a fiber changes FP modes",
    .props = {.keeps_fp_control = false,
              .switches_sigmask = false,
              .enters_kernel = false,
              .copy_stack = true,
              .shadow_stack = false},
    .init_self = cc_init_self,
    .make = cc_nofpu_make,
    .jump = sw__cc_nofpu_jump_call,
    .live_sp = sw__cc_live_sp,
    .priv_size = 2 * sizeof(void *),
};
