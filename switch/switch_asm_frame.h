/* switch_asm_frame.h - where the asm backends keep a suspended context, for the .S and for C. */
#ifndef SWITCHYARD_SWITCH_ASM_FRAME_H
#define SWITCHYARD_SWITCH_ASM_FRAME_H

/*
 * A suspended asm context lives in its sw_ctx: the stack pointer in sw_ctx.sp, the rest in
 * sw_ctx.priv.words[]. The byte offsets below are from the start of sw_ctx. They are
 * written once here, per architecture, used by the assembly (which includes this header)
 * and by switch_asm.c, whose _Static_asserts check them against offsetof() on the real
 * struct. priv starts at 0x48 on x86_64 and at 0x50 on aarch64, where ucontext_t (a member
 * of the same union) is 16-byte aligned.
 */
#if defined(__x86_64__)
/*
 *   offset  word               asm                 asm-nofpu
 *   0x00    sp                 stack pointer       stack pointer
 *   0x48    priv.words[0]      resume address      resume address
 *   0x50    priv.words[1]      rbx                 rbx
 *   0x58    priv.words[2]      rbp                 rbp
 *   0x60    priv.words[3]      r12                 r12
 *   0x68    priv.words[4]      r13                 r13
 *   0x70    priv.words[5]      r14                 r14
 *   0x78    priv.words[6]      r15                 r15
 *   0x80    priv.words[7]      MXCSR, x87 CW       (unused)
 */
#define SW_CTX_SP     0x00
#define SW_CTX_PRIV   0x48
#define SW_ASM_RESUME (SW_CTX_PRIV + 0x00)
#define SW_ASM_RBX    (SW_CTX_PRIV + 0x08)
#define SW_ASM_RBP    (SW_CTX_PRIV + 0x10)
#define SW_ASM_R12    (SW_CTX_PRIV + 0x18)
#define SW_ASM_R13    (SW_CTX_PRIV + 0x20)
#define SW_ASM_R14    (SW_CTX_PRIV + 0x28)
#define SW_ASM_R15    (SW_CTX_PRIV + 0x30)
#define SW_ASM_MXCSR  (SW_CTX_PRIV + 0x38) /* 32 bits */
#define SW_ASM_X87CW  (SW_CTX_PRIV + 0x3c) /* 16 bits */

/* The same as indices into sw_ctx.priv.words, for C. */
#define SW_ASM_WORD_RESUME 0
#define SW_ASM_WORD_FP     7
#define SW_ASM_WORDS       8

#elif defined(__aarch64__)
/*
 *   offset  word                 asm                 asm-nofpu
 *   0x00    sp                   stack pointer       stack pointer
 *   0x50    priv.words[0]        resume address      resume address   (x30, maybe signed)
 *   0x58    priv.words[1]        x29                 x29
 *   0x60    priv.words[2..11]    x19-x28             x19-x28
 *   0xb0    priv.words[12..19]   d8-d15              d8-d15
 *   0xf0    priv.words[20]       FPCR                (unused)
 * Registers saved by one stp/ldp pair sit in adjacent words.
 */
#define SW_CTX_SP          0x00
#define SW_CTX_PRIV        0x50
#define SW_ASM_LR          (SW_CTX_PRIV + 0x00) /* x30, then x29 */
#define SW_ASM_X19         (SW_CTX_PRIV + 0x10)
#define SW_ASM_X21         (SW_CTX_PRIV + 0x20)
#define SW_ASM_X23         (SW_CTX_PRIV + 0x30)
#define SW_ASM_X25         (SW_CTX_PRIV + 0x40)
#define SW_ASM_X27         (SW_CTX_PRIV + 0x50)
#define SW_ASM_D8          (SW_CTX_PRIV + 0x60)
#define SW_ASM_D10         (SW_CTX_PRIV + 0x70)
#define SW_ASM_D12         (SW_CTX_PRIV + 0x80)
#define SW_ASM_D14         (SW_CTX_PRIV + 0x90)
#define SW_ASM_FPCR        (SW_CTX_PRIV + 0xa0)

/* The same as indices into sw_ctx.priv.words, for C. */
#define SW_ASM_WORD_RESUME 0
#define SW_ASM_WORD_X29    1
#define SW_ASM_WORD_X19    2
#define SW_ASM_WORD_D8     12
#define SW_ASM_WORD_FP     20
#define SW_ASM_WORDS       21

#else
#error "switch_asm_frame.h: the asm backends exist for x86_64 and aarch64 only"
#endif

#ifndef __ASSEMBLER__
/* Where a fresh context starts (defined in the .S): passes the context to sw__run. */
void sw__asm_entry(void);
#endif

#endif
