/* switch_cc_pnone.c - the cc-pnone backend: a switch function with clang's preserve_none calling
 * convention (x86_64); fresh contexts and the live part as the cc backend's (switch_cc.c). */
#include "switch.h"
#include "switch_backends.h"
#include "switch_cc.h"
#include "switch_cc_pnone.h"

#include <stddef.h>

#if !defined(__x86_64__) || !__has_attribute(preserve_none)
#error "switch_cc_pnone.c: needs clang's preserve_none on x86_64 (switch/CMakeLists.txt checks)"
#endif

/* The save area is the cc backend's (switch_cc.h); the offsets are written into the asm. */
_Static_assert(offsetof(sw_ctx, sp) == 0, "sp at 0x00");
_Static_assert(SW__CC_RESUME == 0x48 && SW__CC_FP == 0x50 && SW__CC_FPCTL == 0x58,
               "resume, rbp and FP control at 0x48, 0x50, 0x58");

/*
 * from in r12, to in r13. The return address becomes from's resume address and rsp + 8 its
 * stack pointer, as if the call had returned; rbp, which preserve_none still makes the callee
 * keep, and the FP control state go to from's save area. to is resumed with `jmp` (the
 * return-stack predictor is not asked to predict another context's return) and with rsi
 * pointing at it, which a fresh context's sw__cc_entry reads.
 */
__attribute__((naked, preserve_none)) void sw__cc_pnone_switch(sw_ctx *from, sw_ctx *to)
{
    __asm__("movq (%rsp), %rax\n\t"
            "leaq 8(%rsp), %rdx\n\t"
            "movq %rdx, 0x00(%r12)\n\t"
            "movq %rax, 0x48(%r12)\n\t"
            "movq %rbp, 0x50(%r12)\n\t"
            "stmxcsr 0x58(%r12)\n\t"
            "fnstcw 0x5c(%r12)\n\t"
            "movq 0x48(%r13), %rcx\n\t"
            "movq 0x00(%r13), %rsp\n\t"
            "ldmxcsr 0x58(%r13)\n\t"
            "fldcw 0x5c(%r13)\n\t"
            "movq 0x50(%r13), %rbp\n\t"
            "movq %r13, %rsi\n\t"
            "jmp *%rcx");
}

void sw__cc_pnone_jump_call(sw_ctx *from, sw_ctx *to)
{
    sw__cc_pnone_switch(from, to);
}

static int cc_pnone_init_self(sw_ctx *self)
{
    (void)self; /* the first jump away fills it */
    return 0;
}

const sw_backend sw_backend_cc_pnone = {
    .name = "cc-pnone",
    .summary = "a switch function with clang's preserve_none: the caller saves what is live; "
               "MXCSR/x87 CW kept",
    .props = {.keeps_fp_control = true,
              .switches_sigmask = false,
              .enters_kernel = false,
              .copy_stack = true,
              .shadow_stack = false},
    .init_self = cc_pnone_init_self,
    .make = sw__cc_make,
    .jump = sw__cc_pnone_jump_call,
    .live_sp = sw__cc_live_sp,
    .priv_size = 3 * sizeof(void *),
};
