/* floor_x86_64_sysv_elf_gas.S - the reference rows switch/floor and switch/floor-fp: the least a switch can do. */

/*
 * NOT a backend: not ABI-complete, never used by fibers, not in the switch registry. These
 * two functions exist so that every benchmark report shows, beside the real backends, what
 * the cheapest switch that still keeps the callee-saved registers costs on the machine.
 *
 * A suspended floor context is one word, its stack pointer; everything else is pushed on
 * its own stack, where it points:
 *
 *   +--------+-----------------------+-----------------------+
 *   | offset | floor                 | floor-fp              |
 *   +--------+-----------------------+-----------------------+
 *   |  0x00  | r15                   | MXCSR (0x00), x87 CW  |
 *   |        |                       | (0x04), 2 bytes pad   |
 *   |  0x08  | r14                   | r15                   |
 *   |  0x10  | r13                   | r14                   |
 *   |  0x18  | r12                   | r13                   |
 *   |  0x20  | rbp                   | r12                   |
 *   |  0x28  | rbx                   | rbp                   |
 *   |  0x30  | return address        | rbx                   |
 *   |  0x38  | -                     | return address        |
 *   +--------+-----------------------+-----------------------+
 *
 * What is missing for the ABI: floor keeps neither MXCSR nor the x87 control word (so a
 * fiber's rounding mode leaks, as with asm-nofpu); neither tells ASan or Valgrind about the
 * switch; a fresh context is built by hand in bench_loops.c. The resume is a `jmp` to the
 * popped return address, like the real backends, so the return-stack predictor is not
 * confused.
 *
 * void bl_floor_jump(void **save_sp, void *const *load_sp)
 *      rdi: where to store this context's stack pointer; rsi: where the other one's is.
 */

        .text

        .globl  bl_floor_jump
        .type   bl_floor_jump, @function
        .p2align 6                              /* one cache line, as the real backends */
bl_floor_jump:
        .cfi_startproc
        pushq   %rbx                            /* 0x28 */
        pushq   %rbp                            /* 0x20 */
        pushq   %r12                            /* 0x18 */
        pushq   %r13                            /* 0x10 */
        pushq   %r14                            /* 0x08 */
        pushq   %r15                            /* 0x00 */
        movq    %rsp, (%rdi)                    /* this context is now suspended */
        movq    (%rsi), %rsp                    /* the other context's frame */
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbp
        popq    %rbx
        popq    %rcx                            /* its resume address */
        jmp     *%rcx
        .cfi_endproc
        .size   bl_floor_jump, .-bl_floor_jump

        .globl  bl_floor_fp_jump
        .type   bl_floor_fp_jump, @function
        .p2align 6
bl_floor_fp_jump:
        .cfi_startproc
        pushq   %rbx                            /* 0x30 */
        pushq   %rbp                            /* 0x28 */
        pushq   %r12                            /* 0x20 */
        pushq   %r13                            /* 0x18 */
        pushq   %r14                            /* 0x10 */
        pushq   %r15                            /* 0x08 */
        subq    $8, %rsp
        stmxcsr (%rsp)                          /* 0x00 */
        fnstcw  4(%rsp)                         /* 0x04 */
        movq    %rsp, (%rdi)
        movq    (%rsi), %rsp
        ldmxcsr (%rsp)
        fldcw   4(%rsp)
        addq    $8, %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbp
        popq    %rbx
        popq    %rcx
        jmp     *%rcx
        .cfi_endproc
        .size   bl_floor_fp_jump, .-bl_floor_fp_jump

/*
 * bl_floor_ret_jump: bl_floor_jump resuming with `ret`. The return-stack predictor predicts
 * the caller of this call, but the popped address is where the other context called from:
 * the rows resume/floor-ret and resume/floor-jmp show the difference.
 */
        .globl  bl_floor_ret_jump
        .type   bl_floor_ret_jump, @function
        .p2align 6
bl_floor_ret_jump:
        .cfi_startproc
        pushq   %rbx
        pushq   %rbp
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        movq    %rsp, (%rdi)
        movq    (%rsi), %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbp
        popq    %rbx
        ret
        .cfi_endproc
        .size   bl_floor_ret_jump, .-bl_floor_ret_jump

/*
 * bl__floor_entry: where a fresh floor context first resumes. bench_loops.c put the entry
 * function in the rbx slot and its argument in the rbp slot, and left rsp 16-byte aligned
 * here (the popped return address was the last word).
 */
        .globl  bl__floor_entry
        .type   bl__floor_entry, @function
        .p2align 4
bl__floor_entry:
        .cfi_startproc
        .cfi_undefined rip
        movq    %rbp, %rdi
        call    *%rbx                           /* never returns */
        ud2
        .cfi_endproc
        .size   bl__floor_entry, .-bl__floor_entry

        .section .note.GNU-stack, "", @progbits
