/* switch_cc.h - the compiler-assisted backends' jumps: inline, so the compiler saves only what is
 * live across the switch. */
#ifndef SWITCHYARD_SWITCH_CC_H
#define SWITCHYARD_SWITCH_CC_H

#include "switch.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The switch proper saves only where the running context resumes (its stack pointer and a
 * resume address inside this asm statement) and, kept by hand, the frame pointer (the
 * compiler may refuse rbp/x29 in a clobber list when it uses them as the frame pointer); then
 * it loads the target's and jumps there. Every other register is declared clobbered, so the
 * compiler, which sees the call site once this is inlined, spills exactly the values that are
 * live across the switch and reloads them after it, and saves the callee-saved registers the
 * enclosing function uses in its own prologue, as it would for any call of a function that
 * may change them (the idea of PhotonLibOS's context-aware switch).
 *
 * The benefit exists only where the jump is inlined, and a file asks for that by defining
 * SW_JUMP_INLINE_CC before its includes: the benchmark loops do (one loop per backend, the kind
 * a constant), and so may a fiber's own code, whose ring hops engines/fiber_hop.h then inlines
 * (fb_yield_inline). Everywhere else, the fiber runtime's own functions included, sw_cc_jump is
 * a direct call of the out-of-line copy (sw__cc_jump_call, also the operations table's jump),
 * whose prologue saves every callee-saved register (x86_64: rbx, r12-r15; aarch64: x19-x28,
 * x30, d8-d15) because the asm clobbers them: correct, and no faster than the asm backend. The
 * runtime dispatches on a kind known only at run time; inlined there, the asm would make every
 * function that may switch save every callee-saved register for all backends (measured with
 * callgrind: +12 instructions per ring hop of the asm backend, 16 fibers).
 *
 * Layout in sw_ctx: sp = the stack pointer at the switch; priv.words[0] = the resume address,
 * [1] = the frame pointer, [2] = the FP control state (cc only). The resumed side finds rsi/x1
 * pointing at itself, which is how a fresh context's entry stub knows its sw_ctx.
 *
 * The resume is an indirect `jmp`/`br`, never a `ret`, so the return-stack predictor is not
 * misled (see switch/README.md). Nothing is written below the stack pointer, but the compiler
 * may keep data in the x86_64 red zone of a function whose only "call" is this asm, so the
 * live part of a suspended stack starts 128 bytes below the saved sp (sw__cc_live_sp).
 */
#define SW__CC_RESUME (offsetof(sw_ctx, priv.words) + 0 * sizeof(void *))
#define SW__CC_FP     (offsetof(sw_ctx, priv.words) + 1 * sizeof(void *))
#define SW__CC_FPCTL  (offsetof(sw_ctx, priv.words) + 2 * sizeof(void *))

#if defined(__x86_64__)
#define SW__CC_CLOBBERS                                                                            \
    "rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "memory",    \
        "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",      \
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)", "st(3)",     \
        "st(4)", "st(5)", "st(6)", "st(7)"

/* MXCSR and the x87 control word of `from` saved, `to`'s loaded (cc only). As in the asm
 * backend, the x87 word is loaded only when it differs from the one just stored (fldcw is
 * microcoded; switch/README.md). */
#define SW__CC_FP_SAVE "stmxcsr %c[fpctl](%%rdi)\n\tfnstcw %c[fpctl]+4(%%rdi)\n\t"
#define SW__CC_FP_LOAD                                                                             \
    "ldmxcsr %c[fpctl](%%rsi)\n\tmovzwl %c[fpctl]+4(%%rsi), %%ecx\n\t"                             \
    "cmpw %c[fpctl]+4(%%rdi), %%cx\n\tje 2f\n\tfldcw %c[fpctl]+4(%%rsi)\n2:\n\t"

#define SW__CC_SWITCH(fp_save, fp_load)                                                            \
    __asm__ volatile("leaq 1f(%%rip), %%rax\n\t"                                                   \
                     "movq %%rsp, %c[sp](%%rdi)\n\t"                                               \
                     "movq %%rax, %c[resume](%%rdi)\n\t"                                           \
                     "movq %%rbp, %c[fp](%%rdi)\n\t" fp_save "movq %c[resume](%%rsi), %%rax\n\t"   \
                     "movq %c[sp](%%rsi), %%rsp\n\t" fp_load "movq %c[fp](%%rsi), %%rbp\n\t"       \
                     "jmp *%%rax\n"                                                                \
                     "1:"                                                                          \
                     : "+D"(from), "+S"(to)                                                        \
                     : [sp] "i"(offsetof(sw_ctx, sp)), [resume] "i"(SW__CC_RESUME),                \
                       [fp] "i"(SW__CC_FP), [fpctl] "i"(SW__CC_FPCTL)                              \
                     : SW__CC_CLOBBERS)

#elif defined(__aarch64__)
#define SW__CC_CLOBBERS                                                                            \
    "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",      \
        "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", \
        "x30", "memory", "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",  \
        "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", \
        "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31"

/* A `br` may land only on a `bti j` where BTI is enforced; elsewhere the hint is a no-op. */
#if defined(__ARM_FEATURE_BTI_DEFAULT)
#define SW__CC_LANDING "hint #36\n\t"
#else
#define SW__CC_LANDING ""
#endif

#define SW__CC_FP_SAVE "mrs x11, fpcr\n\tstr x11, [x0, #%c[fpctl]]\n\t"
#define SW__CC_FP_LOAD "ldr x11, [x1, #%c[fpctl]]\n\tmsr fpcr, x11\n\t"

#define SW__CC_SWITCH(fp_save, fp_load)                                                            \
    __asm__ volatile(                                                                              \
        "adr x9, 1f\n\t"                                                                           \
        "mov x10, sp\n\t"                                                                          \
        "str x10, [x0, #%c[sp]]\n\t"                                                               \
        "stp x9, x29, [x0, #%c[resume]]\n\t" fp_save "ldp x9, x29, [x1, #%c[resume]]\n\t"          \
        "ldr x10, [x1, #%c[sp]]\n\t" fp_load "mov sp, x10\n\t"                                     \
        "br x9\n"                                                                                  \
        "1:\n\t" SW__CC_LANDING                                                                    \
        : "+r"(x0), "+r"(x1)                                                                       \
        : [sp] "i"(offsetof(sw_ctx, sp)), [resume] "i"(SW__CC_RESUME), [fpctl] "i"(SW__CC_FPCTL)   \
        : SW__CC_CLOBBERS)
#endif

#if defined(__x86_64__) || defined(__aarch64__)
#if defined(__aarch64__)
#define SW__CC_ARGS                                                                                \
    register sw_ctx *x0 __asm__("x0") = from;                                                      \
    register sw_ctx *x1 __asm__("x1") = to
#else
#define SW__CC_ARGS
#endif

/* A fresh context that resumes in sw__cc_entry with its creator's FP control state, and the
 * live part of a suspended one (switch_cc.c; also cc-pnone's). */
int sw__cc_make(sw_ctx *ctx, void *lo, size_t size);
void *sw__cc_live_sp(const sw_ctx *ctx);

/* The out-of-line copies (switch_cc.c), which the operations tables hold. */
void sw__cc_jump_call(sw_ctx *from, sw_ctx *to);
void sw__cc_nofpu_jump_call(sw_ctx *from, sw_ctx *to);

#if defined(SW_JUMP_INLINE_CC)
/* Keeps the FP control state (x86_64: MXCSR, x87 CW; aarch64: FPCR) per context. */
static inline __attribute__((always_inline)) void sw_cc_jump(sw_ctx *from, sw_ctx *to)
{
    SW__CC_ARGS;
    SW__CC_SWITCH(SW__CC_FP_SAVE, SW__CC_FP_LOAD);
}

/* The same without the FP control state: it leaks between contexts, as with asm-nofpu. */
static inline __attribute__((always_inline)) void sw_cc_nofpu_jump(sw_ctx *from, sw_ctx *to)
{
    SW__CC_ARGS;
    SW__CC_SWITCH("", "");
}
#else
static inline void sw_cc_jump(sw_ctx *from, sw_ctx *to)
{
    sw__cc_jump_call(from, to);
}

static inline void sw_cc_nofpu_jump(sw_ctx *from, sw_ctx *to)
{
    sw__cc_nofpu_jump_call(from, to);
}
#endif
#endif

#ifdef __cplusplus
}
#endif
#endif
