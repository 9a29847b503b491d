/* switch_x86_64_sysv_elf_gas.S - context switch for x86_64, System V ABI, ELF, GNU as. */

/*
 * What a suspended context keeps, in its sw_ctx (byte offsets from the start of sw_ctx):
 *
 *   +------+--------+-------------------------------+---------------------------+
 *   | slot | offset | asm                           | asm-nofpu                 |
 *   +------+--------+-------------------------------+---------------------------+
 *   |  sp  |  0x00  | rsp as after a `ret`          | rsp as after a `ret`      |
 *   |  0   |  0x48  | resume address                | resume address            |
 *   |  1   |  0x50  | rbx                           | rbx                       |
 *   |  2   |  0x58  | rbp                           | rbp                       |
 *   |  3   |  0x60  | r12                           | r12                       |
 *   |  4   |  0x68  | r13                           | r13                       |
 *   |  5   |  0x70  | r14                           | r14                       |
 *   |  6   |  0x78  | r15                           | r15                       |
 *   |  7   |  0x80  | MXCSR (0x80) | x87 CW (0x84)  | -                         |
 *   +------+--------+-------------------------------+---------------------------+
 *
 * That is everything the ABI makes callee-saved: rbx, rbp, r12-r15, rsp, the MXCSR control
 * bits and the x87 control word. The rest is caller-saved, so dead at any call, including
 * this one. The offsets come from switch_asm_frame.h, which switch_asm.c checks against the
 * C struct.
 *
 * Why in sw_ctx and not pushed on the stack: the registers are then reloaded from `to`,
 * whose address is in rsi from the start, instead of from to's stack, whose address is
 * known only after rsp itself has been loaded; that dependency cost asm-nofpu about 10% on
 * this machine (3.9 against 3.5 ns per switch).
 *
 * Why the x87 control word is compared before it is loaded: fldcw is microcoded and
 * costly, and almost every switch finds to's word equal to the one in force (few programs
 * change it), so a load that would change nothing is skipped. The word compared is the one
 * just stored, read back through store forwarding. The MXCSR is loaded every time: reading
 * back what stmxcsr stored waits for that store's data, which cost more than the ldmxcsr
 * it would save (results/notes/harness.md has both measurements).
 *
 * Why `jmp *%rcx` and not `ret`: the return-stack predictor would predict a `ret` to the
 * caller of this call, but we resume a different context's caller, so every switch would
 * be mispredicted (about 9 against 4 ns here). The indirect-branch predictor instead learns
 * the resume targets of a regular switching pattern.
 */

#include "switch_asm_frame.h"

/* With the rest of a request's path through the fiber runtime (common/hot_text.h: on a
 * guest where every system call empties the TLB, each page of that path costs a walk). */
        .section .text.hot.request_path, "ax", @progbits

/* void sw_asm_jump(sw_ctx *from, sw_ctx *to): from in rdi, to in rsi. */
        .globl  sw_asm_jump
        .type   sw_asm_jump, @function
        .p2align 6                              /* one cache line: timing stays repeatable */
sw_asm_jump:
        .cfi_startproc
        movq    (%rsp), %rax                    /* our return address: where `from` resumes */
        leaq    8(%rsp), %rdx                   /* rsp once that return has happened */
        movq    %rdx, SW_CTX_SP(%rdi)           /* slot sp */
        movq    %rax, SW_ASM_RESUME(%rdi)       /* slot 0 */
        movq    %rbx, SW_ASM_RBX(%rdi)          /* slot 1 */
        movq    %rbp, SW_ASM_RBP(%rdi)          /* slot 2 */
        movq    %r12, SW_ASM_R12(%rdi)          /* slot 3 */
        movq    %r13, SW_ASM_R13(%rdi)          /* slot 4 */
        movq    %r14, SW_ASM_R14(%rdi)          /* slot 5 */
        movq    %r15, SW_ASM_R15(%rdi)          /* slot 6 */
        stmxcsr SW_ASM_MXCSR(%rdi)              /* slot 7: rounding, masks, FTZ/DAZ */
        fnstcw  SW_ASM_X87CW(%rdi)              /* slot 7: x87 precision, rounding, masks */

        movq    SW_ASM_RESUME(%rsi), %rcx       /* to's resume address, fetched first */
        movq    SW_CTX_SP(%rsi), %rsp           /* from here on we are on to's stack */
        .cfi_def_cfa_offset 0                   /* (for unwinders: to's caller's frame, */
        .cfi_register rip, rcx                  /*  with its return address in rcx) */
        movq    SW_ASM_RBX(%rsi), %rbx          /* slot 1 */
        movq    SW_ASM_RBP(%rsi), %rbp          /* slot 2 */
        movq    SW_ASM_R12(%rsi), %r12          /* slot 3 */
        movq    SW_ASM_R13(%rsi), %r13          /* slot 4 */
        movq    SW_ASM_R14(%rsi), %r14          /* slot 5 */
        movq    SW_ASM_R15(%rsi), %r15          /* slot 6 */
        ldmxcsr SW_ASM_MXCSR(%rsi)              /* slot 7: to's MXCSR */
        movzwl  SW_ASM_X87CW(%rdi), %edx        /* slot 7: the x87 control word now, */
        cmpw    SW_ASM_X87CW(%rsi), %dx         /*  against to's */
        jne     .Lasm_load_x87cw
        jmp     *%rcx                           /* resume to; rsi still holds `to` */
.Lasm_load_x87cw:
        fldcw   SW_ASM_X87CW(%rsi)              /* to's x87 control word */
        jmp     *%rcx
        .cfi_endproc
        .size   sw_asm_jump, .-sw_asm_jump

/* void sw_asm_nofpu_jump(sw_ctx *from, sw_ctx *to): the same without slot 7. */
        .globl  sw_asm_nofpu_jump
        .type   sw_asm_nofpu_jump, @function
        .p2align 6                              /* one cache line: timing stays repeatable */
sw_asm_nofpu_jump:
        .cfi_startproc
        movq    (%rsp), %rax                    /* our return address: where `from` resumes */
        leaq    8(%rsp), %rdx                   /* rsp once that return has happened */
        movq    %rdx, SW_CTX_SP(%rdi)           /* slot sp */
        movq    %rax, SW_ASM_RESUME(%rdi)       /* slot 0 */
        movq    %rbx, SW_ASM_RBX(%rdi)          /* slot 1 */
        movq    %rbp, SW_ASM_RBP(%rdi)          /* slot 2 */
        movq    %r12, SW_ASM_R12(%rdi)          /* slot 3 */
        movq    %r13, SW_ASM_R13(%rdi)          /* slot 4 */
        movq    %r14, SW_ASM_R14(%rdi)          /* slot 5 */
        movq    %r15, SW_ASM_R15(%rdi)          /* slot 6 */

        movq    SW_ASM_RESUME(%rsi), %rcx       /* to's resume address, fetched first */
        movq    SW_CTX_SP(%rsi), %rsp           /* from here on we are on to's stack */
        .cfi_def_cfa_offset 0                   /* (for unwinders: to's caller's frame, */
        .cfi_register rip, rcx                  /*  with its return address in rcx) */
        movq    SW_ASM_RBX(%rsi), %rbx          /* slot 1 */
        movq    SW_ASM_RBP(%rsi), %rbp          /* slot 2 */
        movq    SW_ASM_R12(%rsi), %r12          /* slot 3 */
        movq    SW_ASM_R13(%rsi), %r13          /* slot 4 */
        movq    SW_ASM_R14(%rsi), %r14          /* slot 5 */
        movq    SW_ASM_R15(%rsi), %r15          /* slot 6 */
        jmp     *%rcx                           /* resume to; rsi still holds `to` */
        .cfi_endproc
        .size   sw_asm_nofpu_jump, .-sw_asm_nofpu_jump

/*
 * sw__asm_entry: the resume address of a fresh context (both variants). The jump that got
 * here left the entered context in rsi; switch_asm.c set its sp to a zero word where a
 * return address would be, 8 below a 16-byte boundary, as at a function's first
 * instruction, and its rbp to 0, so frame-pointer walks end here.
 */
        .globl  sw__asm_entry
        .type   sw__asm_entry, @function
        .p2align 4
sw__asm_entry:
        .cfi_startproc
        .cfi_undefined rip                      /* outermost frame: unwinders stop here */
        movq    %rsi, %rdi                      /* sw__run's argument: the entered context */
        andq    $-16, %rsp                      /* 16-aligned before the call, as the ABI wants */
        call    sw__run@PLT                     /* runs entry(arg), then jumps to ctx->link */
        ud2                                     /* sw__run never returns */
        .cfi_endproc
        .size   sw__asm_entry, .-sw__asm_entry

        .section .note.GNU-stack, "", @progbits
