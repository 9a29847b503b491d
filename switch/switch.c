/* switch.c - backend registry and the checked, sanitizer-annotated jump shared by all backends. */
#define _GNU_SOURCE
#include "switch.h"
#include "switch_backends.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SWITCHYARD_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/* The registry's order (switch/CMakeLists.txt): fastest class first. */
static const sw_backend *const backends[] = {
#define SW__ENTRY(id) &sw_backend_##id,
    SW_BACKENDS(SW__ENTRY)
#undef SW__ENTRY
};

size_t sw_backend_count(void)
{
    return sizeof backends / sizeof backends[0];
}

const sw_backend *sw_backend_at(size_t i)
{
    return i < sw_backend_count() ? backends[i] : NULL;
}

const sw_backend *sw_backend_find(const char *name)
{
    for (size_t i = 0; name && i < sw_backend_count(); i++)
        if (strcmp(backends[i]->name, name) == 0) return backends[i];
    return NULL;
}

const char *sw_backend_names(void)
{
    static char names[128];
    if (!names[0]) {
        size_t used = 0;
        for (size_t i = 0; i < sw_backend_count(); i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     backends[i]->name);
    }
    return names;
}

static const struct {
    const char *name, *why;
} left_out[] = {
#define SW__LEFT_OUT(id, name, why) {name, why},
    SW_BACKENDS_LEFT_OUT(SW__LEFT_OUT)
#undef SW__LEFT_OUT
        {NULL, NULL}};

const char *sw_backend_left_out(size_t i, const char **why)
{
    if (i >= sizeof left_out / sizeof left_out[0] - 1) return NULL;
    if (why) *why = left_out[i].why;
    return left_out[i].name;
}

/* The thread's own stack bounds, so ASan can be told where a switch back to it lands. */
static void own_stack_bounds(sw_ctx *self)
{
    pthread_attr_t attr;
    self->stack_lo = NULL;
    self->stack_size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &self->stack_lo, &self->stack_size);
        pthread_attr_destroy(&attr);
    }
}

/* switch_shstk.c: whether this process runs with a shadow stack (or a test pretends so). */
extern bool sw__shstk_on;

/* A backend that would fault under this process's shadow stack: said once, then ENOTSUP.
 * Checked in sw_init_self only: every chain of switches starts from a context it made, and
 * sw_make, which the create rows time, stays as it was. */
__attribute__((noinline, cold)) static bool refused(const sw_backend *b)
{
    const char *why = sw_backend_refusal(b);
    if (!why) return false;
    static const sw_backend *said;
    if (said != b) fprintf(stderr, "%s\n", why);
    said = b;
    errno = ENOTSUP;
    return true;
}

int sw_init_self(sw_ctx *self, const sw_backend *b)
{
    if (!self || !b) {
        errno = EINVAL;
        return -1;
    }
    if (sw__shstk_on && refused(b)) return -1;
    memset(self, 0, sw_ctx_size(b));
    self->backend = b;
    self->state = SW_ACTIVE;
    own_stack_bounds(self);
    return b->init_self(self);
}

int sw_make(sw_ctx *ctx, const sw_backend *b, const sw_stack *st, sw_entry_fn entry, void *arg,
            sw_ctx *link)
{
    if (!ctx || !b || !st || !st->base || st->size < SW_STACK_MIN || !entry || !link) {
        errno = EINVAL;
        return -1;
    }
    memset(ctx, 0, sw_ctx_size(b));
    ctx->backend = b;
    ctx->entry = entry;
    ctx->arg = arg;
    ctx->link = link;
    ctx->stack_lo = st->base;
    ctx->stack_size = st->size;
    ctx->state = SW_FRESH;
#ifdef SWITCHYARD_ASAN
    /* A context abandoned while suspended leaves its frames' redzones poisoned; a stack
     * reused from a pool must start clean, or the new context trips over them. */
    __asan_unpoison_memory_region(st->base, st->size);
#endif
    return b->make(ctx, st->base, st->size);
}

static void refuse(const char *what)
{
    fprintf(stderr, "switch: %s\n", what);
    abort();
}

void sw_jump(sw_ctx *from, sw_ctx *to)
{
    if (to->state == SW_FINISHED) refuse("jump to a finished context");
    if (from->backend != to->backend) refuse("jump between contexts of different backends");
    to->state = SW_ACTIVE;
#ifdef SWITCHYARD_ASAN
    __sanitizer_start_switch_fiber(&from->asan_fake_stack, to->stack_lo, to->stack_size);
    to->backend->jump(from, to);
    __sanitizer_finish_switch_fiber(from->asan_fake_stack, NULL, NULL);
#else
    to->backend->jump(from, to);
#endif
}

void *sw_live_sp(const sw_ctx *ctx)
{
    if (!ctx || !ctx->backend || !ctx->backend->live_sp || ctx->state == SW_FINISHED) return NULL;
    return ctx->backend->live_sp(ctx);
}

/* A context's end: finished, then a jump to its link (inlined into both ways of ending). */
static inline __attribute__((always_inline, noreturn)) void finish(sw_ctx *self)
{
    self->state = SW_FINISHED;
    sw_ctx *link = self->link;
    link->state = SW_ACTIVE;
#ifdef SWITCHYARD_ASAN
    /* NULL: this stack is dead, ASan may drop its fake frames. */
    __sanitizer_start_switch_fiber(NULL, link->stack_lo, link->stack_size);
#endif
    self->backend->jump(self, link);
    refuse("a finished context was resumed");
    __builtin_unreachable();
}

void sw__run(sw_ctx *ctx)
{
#ifdef SWITCHYARD_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    ctx->state = SW_ACTIVE;
    ctx->entry(ctx->arg);
    finish(ctx);
}

void sw_exit(sw_ctx *self)
{
    finish(self);
}
