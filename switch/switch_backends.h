/* switch_backends.h - each backend's table and its directly callable jump, for timed loops. */
#ifndef SWITCHYARD_SWITCH_BACKENDS_H
#define SWITCHYARD_SWITCH_BACKENDS_H

#include "switch.h"
#include "switch_registry.h" /* SW_BACKENDS(X): generated from switch/CMakeLists.txt */

#ifdef __cplusplus
extern "C" {
#endif

/* Every compiled-in backend <id> defines its table and its jump (an inline jump, declared in
 * the header its registry line names, is redeclared here with the same internal linkage). */
#define SW__DECLARE(id)                                                                            \
    extern const sw_backend sw_backend_##id;                                                       \
    void sw_##id##_jump(sw_ctx *from, sw_ctx *to);
SW_BACKENDS(SW__DECLARE)
#undef SW__DECLARE

/* A backend's place in the registry, for timed code that switches on it; SW_KIND_TABLE is a
 * backend this build has no direct call for. */
enum sw_kind {
    SW_KIND_TABLE,
    /* Not a backend: the caller's own hook (the fiber runtime's copy-stack mode), reached
     * through `table` like a backend without a kind, in ASan builds too. The hook ends in
     * sw_jump_direct with the backend's real kind. */
    SW_KIND_HOOK,
#define SW__KIND(id) SW_KIND_##id,
    SW_BACKENDS(SW__KIND)
#undef SW__KIND
};

static inline enum sw_kind sw_kind_of(const sw_backend *b)
{
#define SW__KIND_OF(id)                                                                            \
    if (b == &sw_backend_##id) return SW_KIND_##id;
    SW_BACKENDS(SW__KIND_OF)
#undef SW__KIND_OF
    return SW_KIND_TABLE;
}

/* The compiler-assisted backends (switch_cc.h) are worth a direct call only where their jump is
 * inlined (SW_JUMP_INLINE_CC); elsewhere they take the table's call, so that their kinds add no
 * compare to the dispatch of the other backends. */
#if defined(SWITCHYARD_SWITCH_CC_PNONE_H) && !defined(SW_JUMP_INLINE_CC)
#define SW__TABLE_CALL(kind)                                                                       \
    ((kind) == SW_KIND_cc || (kind) == SW_KIND_cc_nofpu || (kind) == SW_KIND_cc_pnone)
#elif defined(SWITCHYARD_SWITCH_CC_H) && !defined(SW_JUMP_INLINE_CC)
#define SW__TABLE_CALL(kind) ((kind) == SW_KIND_cc || (kind) == SW_KIND_cc_nofpu)
#else
#define SW__TABLE_CALL(kind) 0
#endif

/*
 * The one jump site of timed code: the fiber runtime calls it with the kind it looked up once,
 * the benchmark loops with a constant kind (one loop instance per backend), so every switch
 * either of them makes is a direct call of the backend's jump, and whatever must happen on
 * every switch is written here once. ASan builds take the checked sw_jump instead, which
 * carries the fiber annotations ASan needs.
 *
 * `table` says where the caller keeps the backend, for the ops-table call of a backend without
 * a kind; it is read only on that path. (Passing the backend itself loads it before the
 * dispatch on every switch: one more instruction per star hop, measured with callgrind.)
 */
static inline __attribute__((always_inline)) void
sw_jump_direct(enum sw_kind kind, const sw_backend *const *table, sw_ctx *from, sw_ctx *to)
{
#ifdef SWITCHYARD_ASAN
    if (kind == SW_KIND_HOOK)
        (*table)->jump(from, to);
    else
        sw_jump(from, to);
#else
    switch (kind) {
#define SW__CASE(id)                                                                               \
    case SW_KIND_##id:                                                                             \
        if (SW__TABLE_CALL(SW_KIND_##id)) break;                                                   \
        sw_##id##_jump(from, to);                                                                  \
        return;
        SW_BACKENDS(SW__CASE)
#undef SW__CASE
    default:
        break;
    }
    (*table)->jump(from, to);
#endif
}

#ifdef __cplusplus
}
#endif
#endif
