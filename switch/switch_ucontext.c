/* switch_ucontext.c - the POSIX makecontext/swapcontext backend (one rt_sigprocmask per swap). */
#define _GNU_SOURCE /* REG_RSP */
#include "switch.h"
#include "switch_backends.h"

/*
 * makecontext only passes int arguments to the entry function, and splitting a pointer into
 * two ints is the classic portability trap. Instead the jump leaves the target context in a
 * thread-local variable; a fresh context's trampoline picks it up. One extra store per
 * switch is noise beside the system call swapcontext makes anyway.
 */
static __thread sw_ctx *entering;

static void ucontext_trampoline(void)
{
    sw__run(entering);
}

static int ucontext_init_self(sw_ctx *self)
{
    return getcontext(&self->priv.uc);
}

static int ucontext_make(sw_ctx *ctx, void *lo, size_t size)
{
    if (getcontext(&ctx->priv.uc) != 0) return -1;
    ctx->priv.uc.uc_stack.ss_sp = lo;
    ctx->priv.uc.uc_stack.ss_size = size;
    /* The entry never returns through uc_link: sw__run switches to ctx->link itself. */
    ctx->priv.uc.uc_link = NULL;
    makecontext(&ctx->priv.uc, ucontext_trampoline, 0);
    return 0;
}

void sw_ucontext_jump(sw_ctx *from, sw_ctx *to)
{
    entering = to;
    swapcontext(&from->priv.uc, &to->priv.uc);
}

/* swapcontext records the stack pointer as it will be after its return (x86_64: the return
 * address becomes the saved rip; aarch64: x30 is saved, nothing is pushed), and keeps the
 * registers and FP state in the ucontext_t, not on the stack. A fresh context's stack pointer
 * is where makecontext put the trampoline's frame. */
static void *ucontext_live_sp(const sw_ctx *ctx)
{
#if defined(__x86_64__)
    return (void *)ctx->priv.uc.uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (void *)ctx->priv.uc.uc_mcontext.sp;
#else
#error "switch_ucontext.c: where does this architecture's mcontext_t keep the stack pointer?"
#endif
}

/* glibc's x86_64 makecontext gives a context a shadow stack of its own when the process runs
 * with one, and swapcontext switches it (rstorssp/saveprevssp): taken from glibc's sources,
 * not observed here (no CET machine). Its aarch64 code has no guarded control stack support. */
#if defined(__x86_64__)
#define UCONTEXT_SHSTK true
#else
#define UCONTEXT_SHSTK false
#endif

const sw_backend sw_backend_ucontext = {
    .name = "ucontext",
    .summary = "makecontext/swapcontext: portable, saves the signal mask with a syscall",
    .props = {.keeps_fp_control = true,
              .switches_sigmask = true,
              .enters_kernel = true,
              .copy_stack = true,
              .shadow_stack = UCONTEXT_SHSTK},
    .init_self = ucontext_init_self,
    .make = ucontext_make,
    .jump = sw_ucontext_jump,
    .live_sp = ucontext_live_sp,
    .priv_size = sizeof(ucontext_t),
};
