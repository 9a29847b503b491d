/* switch.h - the context-switch layer's contract: one API over interchangeable backends. */
#ifndef SWITCHYARD_SWITCH_H
#define SWITCHYARD_SWITCH_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <ucontext.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A context is a place execution can be suspended and resumed: either the thread's own
 * execution (made a context with sw_init_self) or a new one created on a stack with sw_make.
 *
 * Lifecycle and the rule for a returning entry function:
 *   sw_make(ctx, ..., entry, arg, link)   ctx is SW_FRESH; nothing runs yet
 *   sw_jump(from, ctx)                    entry(arg) starts on ctx's stack
 *   entry returns                         ctx becomes SW_FINISHED and control switches to
 *                                         `link`, exactly as if ctx had called
 *                                         sw_jump(ctx, link) as its last act
 *   sw_jump(x, finished ctx)              refused: prints "switch: jump to a finished
 *                                         context" on stderr and aborts (checked wrapper only)
 * `link` is required: a context whose entry returns always has somewhere to go, so returning
 * is never undefined behaviour. After a context finished, its stack may be freed or reused.
 *
 * Contexts belong to one thread: jumping to a context suspended by another thread is
 * undefined behaviour and is not checked.
 */

typedef void (*sw_entry_fn)(void *arg);

/* A guarded stack: usable bytes [base, base + size), one PROT_NONE guard page below base. */
typedef struct sw_stack {
    void *base;      /* lowest usable address (just above the guard page) */
    size_t size;     /* usable bytes, a multiple of the page size */
    void *map;       /* start of the whole mapping, guard page included */
    size_t map_size; /* bytes mapped, guard page included */
    unsigned vg_id;  /* Valgrind's id for the registered stack (0 without Valgrind) */
} sw_stack;

enum sw_state { SW_FRESH, SW_ACTIVE, SW_FINISHED };

struct sw_backend;

typedef struct sw_ctx {
    /* The saved stack pointer (asm backends) or the fcontext_t (fcontext); kept first so the
     * assembly can address it at offset 0. */
    void *sp;
    const struct sw_backend *backend;
    struct sw_ctx *link; /* resumed when entry returns */
    sw_entry_fn entry;
    void *arg;
    void *stack_lo; /* lowest usable stack address (for ASan and diagnostics) */
    size_t stack_size;
    void *asan_fake_stack; /* ASan's fake-stack handle while this context is suspended */
    enum sw_state state;
    /* Per-backend storage: a backend uses only its own member. */
    union {
        ucontext_t uc;
        jmp_buf jb;
        /* asm: the saved registers (switch_asm_frame.h: 8 words on x86_64, 21 on
         * aarch64); fcontext: [0] = the context last jumped to. */
        void *words[24];
    } priv;
} sw_ctx;

/* Documented properties of a backend; the verification suite asserts each of them. */
typedef struct sw_props {
    bool keeps_fp_control; /* the FP control state (x86_64: MXCSR and the x87 control
                              word; aarch64: FPCR) is per context */
    bool switches_sigmask; /* each context has its own signal mask */
    bool enters_kernel;    /* at least one system call on every switch */
    bool copy_stack;       /* sw_live_sp works: a suspended context's live stack can be moved
                              out and back (the fiber runtime's copy-stack mode) */
    bool signs_resume;     /* the saved resume address is signed and checked on resume
                              (aarch64 pointer authentication, on a CPU that has it): a
                              forged one faults instead of running */
    bool shadow_stack;     /* keeps working with the CPU's shadow stack enabled (x86_64 CET):
                              switches the shadow stack along with the stack. Where the process
                              runs with one, a backend without this is refused (sw_init_self
                              fails with ENOTSUP) instead of faulting on a `ret` */
} sw_props;

/* The operations table of one backend. Timed loops call a backend's functions directly
 * (e.g. sw_asm_jump) instead of through this table: an indirect call costs about as much as
 * the fastest switch. */
typedef struct sw_backend {
    const char *name;    /* as in its registry line (switch/CMakeLists.txt) */
    const char *summary; /* one line for listings */
    sw_props props;
    /* Turn the calling thread's current execution into a context other contexts can return
     * to. Returns 0, or -1 with errno set. */
    int (*init_self)(sw_ctx *self);
    /* Prepare ctx to run entry(arg) on the stack [lo, lo + size). Returns 0 or -1/errno.
     * Called only by sw_make, which has checked the stack (at least SW_STACK_MIN bytes). */
    int (*make)(sw_ctx *ctx, void *lo, size_t size);
    /* Save the running context into `from` and resume `to`. Returns when someone jumps back
     * to `from`. */
    void (*jump)(sw_ctx *from, sw_ctx *to);
    /* The lowest live address of a suspended context's stack (its saved stack pointer), or
     * NULL where the backend cannot tell (then props.copy_stack is false). */
    void *(*live_sp)(const sw_ctx *ctx);
    /* Bytes of sw_ctx.priv the backend uses. A context of this backend may live in storage of
     * only sw_ctx_size(b) bytes (the fiber runtime allocates its records that way). */
    size_t priv_size;
} sw_backend;

/* ---- backends ------------------------------------------------------------------------ */

/* Compiled-in backends, in the registry's order (switch/CMakeLists.txt: fastest class first). */
size_t sw_backend_count(void);
const sw_backend *sw_backend_at(size_t i);
/* Look a backend up by name; NULL if unknown or not compiled in. */
const sw_backend *sw_backend_find(const char *name);
/* The compiled-in names, comma separated, for error messages. */
const char *sw_backend_names(void);
/* The i-th backend the registry declares but this build left out, and in *why the reason (a
 * missing library, architecture or compiler feature); NULL past the last. */
const char *sw_backend_left_out(size_t i, const char **why);

/* The bytes a context of backend b needs: sw_ctx up to the end of the backend's priv member. */
static inline size_t sw_ctx_size(const sw_backend *b)
{
    return offsetof(sw_ctx, priv) + b->priv_size;
}

/* ---- contexts (checked, annotated for ASan; use these outside timed loops) ----------- */

/* Make the calling thread's current execution a context of backend b. */
int sw_init_self(sw_ctx *self, const sw_backend *b);
/* Create a context that runs entry(arg) on stack st and resumes link when entry returns.
 * Returns 0, or -1 with errno = EINVAL (no link, no stack, stack too small). */
int sw_make(sw_ctx *ctx, const sw_backend *b, const sw_stack *st, sw_entry_fn entry, void *arg,
            sw_ctx *link);
/* Switch from the running context `from` to `to` (same backend). */
void sw_jump(sw_ctx *from, sw_ctx *to);
/*
 * The live part of a context suspended by a jump (or fresh) is [sw_live_sp(ctx), top of its
 * stack): everything above the saved stack pointer. Nothing below it is needed to resume, so
 * a runtime may copy that range out, let another context use the stack, and copy it back to
 * the same addresses before resuming (a copy or shared stack). Returns NULL when the backend
 * cannot tell (props.copy_stack false: setjmp, whose jmp_buf holds a mangled stack pointer)
 * or ctx is not suspended on a stack of its own.
 */
void *sw_live_sp(const sw_ctx *ctx);
/* Copy n bytes between a stack's live part and a save buffer, in either direction, for a copy
 * stack: a memcpy that also keeps the tools right. Under ASan the bytes carry no frame
 * redzones afterwards (a restored frame layout differs from the evicted one); under Valgrind
 * the destination is made addressable first (it may lie below a stack pointer memcheck saw). */
void sw_stack_copy(void *dst, const void *src, size_t n);
/* End the running context `self` now, as if its entry function had returned: it is marked
 * finished and its link resumed. Its frames are abandoned where they are, never unwound (so a
 * caller that needs to leave from deep inside its frames keeps no jump buffer in them). */
void sw_exit(sw_ctx *self) __attribute__((noreturn));
static inline bool sw_finished(const sw_ctx *ctx)
{
    return ctx->state == SW_FINISHED;
}

/* ---- stacks -------------------------------------------------------------------------- */

/* Each guarded stack costs two memory mappings (the usable part and its PROT_NONE guard
 * page), so vm.max_map_count bounds how many can exist at once (65530 maps: at most ~32000
 * stacks, fewer with the program's own mappings). */
#define SW_STACK_MIN 16384

/* Map a stack of at least `size` usable bytes (rounded up to pages) with a guard page below.
 * Returns 0, or -1 with errno (ENOMEM also when vm.max_map_count is exhausted). */
int sw_stack_alloc(sw_stack *st, size_t size);
void sw_stack_free(sw_stack *st);

/* How contexts get their stacks, declared so the harness reads what exists (switch-info
 * --list --json) instead of guessing: `guarded`, sw_stack_alloc's stack of its own per
 * context, and `copy`, a few shared stacks the fiber runtime moves live parts on and off
 * (sw_live_sp, sw_stack_copy; fiber.h's FB_STACK_COPY). */
typedef struct sw_stack_mode {
    const char *name;
    const char *summary;
    bool shares_stack; /* contexts take turns on one stack, their live parts copied out and in */
} sw_stack_mode;
size_t sw_stack_mode_count(void);
const sw_stack_mode *sw_stack_mode_at(size_t i);

/* Install the process-wide SIGSEGV/SIGBUS handler that recognises faults in guard pages and
 * prints "fiber stack overflow: ..." before aborting, and give the calling thread an
 * alternate signal stack so the handler can run when the faulting stack is exhausted. Call
 * once per thread that runs contexts; idempotent. Returns 0 or -1/errno. */
int sw_overflow_guard_init(void);

/* ---- shadow stacks ------------------------------------------------------------------- */

/* Whether this process runs with a shadow stack (x86_64 CET: arch_prctl ARCH_SHSTK_STATUS);
 * when not, *why_not (if given) says why in one line. */
bool sw_shadow_stack_enabled(const char **why_not);
/* NULL when backend b may run in this process; otherwise why not, one line ("switch: backend
 * asm refused: ..."). sw_init_self prints it once and fails with ENOTSUP; no switch can
 * happen without a context it made. */
const char *sw_backend_refusal(const sw_backend *b);
/* Tests only: report the shadow stack as enabled (1) or disabled (0) whatever the kernel says;
 * -1 asks the kernel again. */
void sw__fake_shadow_stack(int enabled);

/* ---- for backends only ---------------------------------------------------------------- */

/* Every backend's first code on a new stack ends up here: finish the ASan switch, run the
 * entry function, mark the context finished and switch to its link. Never returns. */
void sw__run(sw_ctx *ctx) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif
#endif
