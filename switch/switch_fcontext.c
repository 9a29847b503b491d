/* switch_fcontext.c - Boost.Context's make_fcontext/jump_fcontext, called from C. */
#include "switch.h"
#include "switch_backends.h"
#include "switch_fcontext.h"

/*
 * libboost_context exports make_fcontext and jump_fcontext as plain C symbols (they are
 * written in assembly); its headers are C++, so the prototypes are declared here and in
 * switch_fcontext.h, with the layout of Boost 1.74's transfer_t (returned in rax:rdx).
 *
 * An fcontext handle only exists once a context is suspended, and jump_fcontext hands it to
 * the context that is resumed, not to the one that left. So every jump passes its own sw_ctx
 * as the data word, and whoever wakes up stores the handle it received there; the jump
 * itself is inline in switch_fcontext.h.
 */
void *make_fcontext(void *sp, size_t size, void (*fn)(sw__fcontext_transfer));

/* A fresh context's first code: the jumper left its target, this context, in words[0]. */
static void fcontext_entry(sw__fcontext_transfer t)
{
    sw_ctx *jumper = t.data;
    jumper->sp = t.fctx;
    sw__run(jumper->priv.words[0]);
}

static int fcontext_init_self(sw_ctx *self)
{
    /* The handle of the running execution arrives when something jumps back to it. */
    (void)self;
    return 0;
}

static int fcontext_make(sw_ctx *ctx, void *lo, size_t size)
{
    /* make_fcontext takes the top of the stack and aligns it itself. On x86_64 Boost's
     * frame starts with the creator's MXCSR and x87 control word, as the asm backend's
     * does; its aarch64 jump_fcontext saves no FPCR at all. */
    ctx->sp = make_fcontext((char *)lo + size, size, fcontext_entry);
    return 0;
}

/* The handle is the stack pointer jump_fcontext left, with its saved registers above it. */
static void *fcontext_live_sp(const sw_ctx *ctx)
{
    return ctx->sp;
}

/* What Boost 1.74's jump_fcontext keeps of the FP control state differs by architecture:
 * the x86_64 SysV code saves MXCSR and the x87 control word; the aarch64 AAPCS code saves
 * d8-d15 but not FPCR (read from its disassembly; switch/tests/test-fpu.c checks both). */
#if defined(__x86_64__)
#define FCONTEXT_FP       "saves MXCSR and x87 CW"
#define FCONTEXT_KEEPS_FP true
#elif defined(__aarch64__)
#define FCONTEXT_FP       "does not save FPCR"
#define FCONTEXT_KEEPS_FP false
#else
#error "switch_fcontext.c: declare what jump_fcontext keeps of the FP state on this CPU"
#endif

const sw_backend sw_backend_fcontext = {
    .name = "fcontext",
    .summary = "Boost.Context jump_fcontext (Debian's libboost_context): " FCONTEXT_FP,
    .props = {.keeps_fp_control = FCONTEXT_KEEPS_FP,
              .switches_sigmask = false,
              .enters_kernel = false,
              .copy_stack = true,
              .shadow_stack = false},
    .init_self = fcontext_init_self,
    .make = fcontext_make,
    .jump = sw_fcontext_jump,
    .live_sp = fcontext_live_sp,
    .priv_size = sizeof(void *), /* words[0] */
};
