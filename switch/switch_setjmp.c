/* switch_setjmp.c - the _setjmp/_longjmp backend, entering a new stack by a one-time bootstrap. */

/*
 * With _FORTIFY_SOURCE, glibc redirects _longjmp to __longjmp_chk, which aborts with
 * "longjmp causes uninitialized stack frame" whenever the target stack pointer lies below the
 * current one outside a signal stack - half of all jumps between two stacks. Switching
 * stacks is this file's purpose, so it opts out of the checked variant before any header
 * decides on it; the check would protect nothing here.
 */
#undef _FORTIFY_SOURCE

#include "switch.h"
#include "switch_backends.h"

#include <setjmp.h>
#include <stdint.h>

#ifdef SWITCHYARD_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "switch_setjmp.c: the bootstrap below is written for x86_64 and aarch64 only"
#endif

/*
 * glibc mangles the stack and instruction pointers it keeps in a jmp_buf (PTR_MANGLE, a
 * per-process secret), so a jmp_buf for a new stack cannot be written by hand. Two ways in:
 *
 *  - the signal-stack trick (Engelschall 2000): point sigaltstack at the new stack, raise a
 *    signal, _setjmp in the handler and return; later _longjmp into the handler's frame.
 *    Portable POSIX, but every sw_make then costs about six system calls, replaces the
 *    thread's alternate signal stack and a signal disposition for a moment (the overflow
 *    guard needs its own alternate stack installed at that very time), and runs the first
 *    code of every context inside a signal handler, which ASan cannot follow.
 *  - a one-time bootstrap, the choice here: two instructions of inline assembly move the
 *    stack pointer to the new stack and call bootstrap(), which takes the _setjmp the
 *    context will later be resumed from and _longjmps straight back into sw_make's frame.
 *    No system call, no signal state touched; the price is those two instructions per
 *    architecture (x86_64 and aarch64 below).
 *
 * After that, every switch is _setjmp(from) + _longjmp(to): no signal mask (that is what
 * the underscore variants skip) and no system call. glibc's jmp_buf holds the callee-saved
 * registers, the stack pointer and the return address (x86_64: rbx, rbp, r12-r15; aarch64:
 * x19-x30 and d8-d15) and nothing of the FP control state (MXCSR and the x87 control word,
 * or FPCR), so this backend does not keep it per context.
 *
 * Two caveats of _longjmp carry over: glibc runs pthread_cleanup_push handlers of frames it
 * believes it unwinds (a fiber should not leave one pushed across a switch), and under ASan
 * the longjmp interceptor unpoisons the stack being left, which may hide (never invent) an
 * error in a suspended frame.
 */

struct bootstrap_args {
    sw_ctx *ctx;
    jmp_buf back; /* sw_make's frame, where the bootstrap returns to */
#ifdef SWITCHYARD_ASAN
    void *creator_fake_stack;
    const void *creator_lo;
    size_t creator_size;
#endif
};

/*
 * Runs once on the new stack, on top of which its frame then stays, suspended in _setjmp,
 * until the first jump to the context. Not instrumented by ASan: no fake frames and
 * redzones to keep across that pause.
 */
__attribute__((noreturn, noinline, no_sanitize_address)) static void
bootstrap(struct bootstrap_args *args)
{
    /* Read before _setjmp and never written again, so it is intact when _longjmp returns
     * here; volatile makes the compiler keep it in this frame rather than a register. */
    sw_ctx *volatile ctx = args->ctx;
#ifdef SWITCHYARD_ASAN
    __sanitizer_finish_switch_fiber(NULL, &args->creator_lo, &args->creator_size);
#endif
    if (_setjmp(ctx->priv.jb) == 0) {
#ifdef SWITCHYARD_ASAN
        __sanitizer_start_switch_fiber(NULL, args->creator_lo, args->creator_size);
#endif
        _longjmp(args->back, 1);
    }
    /* Entered by the first sw_setjmp_jump to ctx. */
    sw__run(ctx);
}

static int setjmp_init_self(sw_ctx *self)
{
    /* The first jump away from the running execution saves it into self->priv.jb. */
    (void)self;
    return 0;
}

static int setjmp_make(sw_ctx *ctx, void *lo, size_t size)
{
    struct bootstrap_args args = {.ctx = ctx};
    uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
    if (_setjmp(args.back) == 0) {
#ifdef SWITCHYARD_ASAN
        __sanitizer_start_switch_fiber(&args.creator_fake_stack, lo, size);
#endif
        /* The stack pointer := top (16-aligned), then call bootstrap(&args). It never
         * returns; it comes back by _longjmp(args.back). */
#if defined(__x86_64__)
        /* After the call's push, bootstrap starts 8 below a 16-byte boundary, as the ABI
         * requires. */
        __asm__ volatile("movq %0, %%rsp\n\t"
                         "call *%1"
                         :
                         : "r"(top), "r"(bootstrap), "D"(&args)
                         : "memory");
#else
        /* AAPCS64: sp 16-aligned at all times; blr pushes nothing. The argument goes in x0.
         * bootstrap is a C function, so with BTI it starts with a landing pad for blr. */
        register struct bootstrap_args *x0 __asm__("x0") = &args;
        __asm__ volatile("mov sp, %0\n\t"
                         "blr %1"
                         :
                         : "r"(top), "r"(bootstrap), "r"(x0)
                         : "memory");
#endif
        __builtin_unreachable();
    }
#ifdef SWITCHYARD_ASAN
    __sanitizer_finish_switch_fiber(args.creator_fake_stack, NULL, NULL);
#endif
    return 0;
}

void sw_setjmp_jump(sw_ctx *from, sw_ctx *to)
{
    if (_setjmp(from->priv.jb) == 0) _longjmp(to->priv.jb, 1);
}

const sw_backend sw_backend_setjmp = {
    .name = "setjmp",
    .summary = "_setjmp/_longjmp, a new stack entered by a one-time bootstrap: no syscall, FP "
               "control state not kept (glibc saves neither)",
    /* No copy stacks: glibc mangles the stack pointer it saves in the jmp_buf, so the live
     * part of a suspended context's stack cannot be found. */
    .props = {.keeps_fp_control = false,
              .switches_sigmask = false,
              .enters_kernel = false,
              .copy_stack = false,
              .shadow_stack = false},
    .init_self = setjmp_init_self,
    .make = setjmp_make,
    .jump = sw_setjmp_jump,
    .live_sp = NULL,
    .priv_size = sizeof(jmp_buf),
};
