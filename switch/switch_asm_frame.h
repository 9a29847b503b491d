/* switch_asm_frame.h - where the asm backends keep a suspended context, for the .S and for C. */
#ifndef SWITCHYARD_SWITCH_ASM_FRAME_H
#define SWITCHYARD_SWITCH_ASM_FRAME_H

/*
 * A suspended asm context lives in its sw_ctx: the stack pointer in sw_ctx.sp, the rest in
 * sw_ctx.priv.words[0..7]. The byte offsets below are from the start of sw_ctx. They are
 * written once here, used by the assembly (which includes this header) and by switch_asm.c,
 * whose _Static_asserts check them against offsetof() on the real struct.
 *
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

#ifndef __ASSEMBLER__
/* Where a fresh context starts (defined in the .S): passes the context to sw__run. */
void sw__asm_entry(void);
#endif

#endif
