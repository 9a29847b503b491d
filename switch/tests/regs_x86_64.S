/* regs_x86_64.S - loads patterns into the callee-saved registers around a switch, for test-regs.c. */

/*
 * void check_regs_switch(void (*jump)(sw_ctx *, sw_ctx *),   rdi
 *                        sw_ctx *from, sw_ctx *to,           rsi, rdx
 *                        const uint64_t in[6],               rcx
 *                        uint64_t out[6]);                   r8
 *
 * The System V ABI says rbx, rbp, r12-r15 survive a call. C code cannot test that about a
 * switch: the compiler decides what lives in those registers. Here the six registers hold
 * known values (in[]) while jump(from, to) runs; the context switched to loads its own
 * patterns through this same function before switching back, so a backend that forgets a
 * register hands over the other context's value, and out[] shows it.
 *
 * Frame while jump runs (the caller's registers are restored on the way out):
 *   +------------+------------------------------------------+
 *   | rsp + 56   | return address                           |
 *   | rsp + 48   | caller's rbp                             |
 *   | rsp + 40   | caller's rbx                             |
 *   | rsp + 32   | caller's r12                             |
 *   | rsp + 24   | caller's r13                             |
 *   | rsp + 16   | caller's r14                             |
 *   | rsp +  8   | caller's r15                             |
 *   | rsp +  0   | out (r8 does not survive the call)       |
 *   +------------+------------------------------------------+
 * Seven pushes after the return address leave rsp 16-byte aligned for the call.
 */

    .text
    .globl  check_regs_switch
    .type   check_regs_switch, @function
    .p2align 4
check_regs_switch:
    .cfi_startproc
    pushq   %rbp                    /* save the caller's callee-saved registers */
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbp, 0
    pushq   %rbx
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbx, 0
    pushq   %r12
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r12, 0
    pushq   %r13
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r13, 0
    pushq   %r14
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r14, 0
    pushq   %r15
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r15, 0
    pushq   %r8                     /* keep out[] across the call */
    .cfi_adjust_cfa_offset 8

    movq    %rdi, %rax              /* rax = jump */
    movq    %rsi, %rdi              /* first argument: from */
    movq    %rdx, %rsi              /* second argument: to */
    movq    0(%rcx), %rbx           /* load the patterns */
    movq    8(%rcx), %rbp
    movq    16(%rcx), %r12
    movq    24(%rcx), %r13
    movq    32(%rcx), %r14
    movq    40(%rcx), %r15
    call    *%rax                   /* switch away; returns when switched back */

    movq    (%rsp), %rax            /* rax = out */
    movq    %rbx, 0(%rax)           /* report the registers as they came back */
    movq    %rbp, 8(%rax)
    movq    %r12, 16(%rax)
    movq    %r13, 24(%rax)
    movq    %r14, 32(%rax)
    movq    %r15, 40(%rax)

    addq    $8, %rsp                /* drop out[] */
    .cfi_adjust_cfa_offset -8
    popq    %r15                    /* restore the caller's registers */
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r15
    popq    %r14
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r14
    popq    %r13
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r13
    popq    %r12
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r12
    popq    %rbx
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbx
    popq    %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbp
    ret
    .cfi_endproc
    .size   check_regs_switch, .-check_regs_switch

    .section .note.GNU-stack,"",%progbits
