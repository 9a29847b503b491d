/* regs_aarch64.S - loads patterns into the callee-saved registers around a switch, for test-regs.c. */

/*
 * void check_regs_switch(void (*jump)(sw_ctx *, sw_ctx *),   x0
 *                        sw_ctx *from, sw_ctx *to,           x1, x2
 *                        const uint64_t in[19],              x3
 *                        uint64_t out[19]);                  x4
 *
 * AAPCS64 says x19-x29 and d8-d15 survive a call. C code cannot test that about a switch:
 * the compiler decides what lives in those registers. Here the 19 registers hold known
 * values (in[0..10] for x19-x29, in[11..18] for d8-d15) while jump(from, to) runs; the
 * context switched to loads its own patterns through this same function before switching
 * back, so a backend that forgets a register hands over the other context's value, and
 * out[] shows it. x29 holds a pattern too, so no frame-pointer chain exists while the
 * jump runs; everything here is addressed from sp, which the switch must keep as well.
 *
 * Frame while jump runs (the caller's registers are restored on the way out):
 *   +------------+------------------------------------------+
 *   | sp + 160   | out (x4 does not survive the call)       |
 *   | sp + 96    | caller's d8-d15                          |
 *   | sp + 16    | caller's x19-x28                         |
 *   | sp +  0    | caller's x29, x30                        |
 *   +------------+------------------------------------------+
 * 176 bytes keep sp 16-byte aligned, as AAPCS64 requires at all times.
 */

        .text
        .globl  check_regs_switch
        .type   check_regs_switch, %function
        .p2align 4
check_regs_switch:
        .cfi_startproc
        sub     sp, sp, #176                    /* the frame drawn above */
        .cfi_def_cfa_offset 176
        stp     x29, x30, [sp, #0]              /* save the caller's callee-saved registers */
        .cfi_offset x29, -176
        .cfi_offset x30, -168
        stp     x19, x20, [sp, #16]
        .cfi_offset x19, -160
        .cfi_offset x20, -152
        stp     x21, x22, [sp, #32]
        .cfi_offset x21, -144
        .cfi_offset x22, -136
        stp     x23, x24, [sp, #48]
        .cfi_offset x23, -128
        .cfi_offset x24, -120
        stp     x25, x26, [sp, #64]
        .cfi_offset x25, -112
        .cfi_offset x26, -104
        stp     x27, x28, [sp, #80]
        .cfi_offset x27, -96
        .cfi_offset x28, -88
        stp     d8, d9, [sp, #96]
        stp     d10, d11, [sp, #112]
        stp     d12, d13, [sp, #128]
        stp     d14, d15, [sp, #144]
        str     x4, [sp, #160]                  /* keep out[] across the call */

        mov     x9, x0                          /* x9 = jump */
        mov     x0, x1                          /* first argument: from */
        mov     x1, x2                          /* second argument: to */
        ldp     x19, x20, [x3, #0]              /* load the patterns */
        ldp     x21, x22, [x3, #16]
        ldp     x23, x24, [x3, #32]
        ldp     x25, x26, [x3, #48]
        ldp     x27, x28, [x3, #64]
        ldr     x29, [x3, #80]
        ldp     d8, d9, [x3, #88]
        ldp     d10, d11, [x3, #104]
        ldp     d12, d13, [x3, #120]
        ldp     d14, d15, [x3, #136]
        blr     x9                              /* switch away; returns when switched back */

        ldr     x9, [sp, #160]                  /* x9 = out */
        stp     x19, x20, [x9, #0]              /* report the registers as they came back */
        stp     x21, x22, [x9, #16]
        stp     x23, x24, [x9, #32]
        stp     x25, x26, [x9, #48]
        stp     x27, x28, [x9, #64]
        str     x29, [x9, #80]
        stp     d8, d9, [x9, #88]
        stp     d10, d11, [x9, #104]
        stp     d12, d13, [x9, #120]
        stp     d14, d15, [x9, #136]

        ldp     d14, d15, [sp, #144]            /* restore the caller's registers */
        ldp     d12, d13, [sp, #128]
        ldp     d10, d11, [sp, #112]
        ldp     d8, d9, [sp, #96]
        ldp     x27, x28, [sp, #80]
        ldp     x25, x26, [sp, #64]
        ldp     x23, x24, [sp, #48]
        ldp     x21, x22, [sp, #32]
        ldp     x19, x20, [sp, #16]
        ldp     x29, x30, [sp, #0]
        add     sp, sp, #176                    /* drop the frame */
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        .size   check_regs_switch, .-check_regs_switch

        .section .note.GNU-stack,"",%progbits
