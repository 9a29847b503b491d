/* fiber_access.c - what the other layers read of a fiber and its runtime (the running fiber,
 * a fiber's wait slot and area, how its last wake ended, the shared stacks, the statistics),
 * apart from fiber.c's scheduling. */
#include "fiber.h"
#include "fiber_hop.h"
#include "fiber_layout.h"
#include "hot_text.h"

#include <stddef.h>
#include <stdint.h>

uint16_t HOT_TEXT fb_woken_with(const fiber *f)
{
    return f->woken_with;
}

fiber *HOT_TEXT fb_self(void)
{
    return fb__rt_tls ? fb__rt_tls->current : NULL;
}

void **fb_wait_slot(fiber *f)
{
    return &f->wait_slot;
}

void *HOT_TEXT fb_wait_area(fiber *f)
{
    return f->wait_area;
}

fiber *HOT_TEXT fb_of_wait_area(void *area)
{
    return (fiber *)((char *)area - offsetof(fiber, wait_area));
}

bool fb_on_shared_stack(const void *p, size_t len)
{
    fb_runtime *rt = fb__rt_tls;
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    for (unsigned i = 0; rt && i < rt->nshared; i++) {
        uintptr_t base = (uintptr_t)rt->shared[i].stack.base;
        if (lo < base + rt->shared[i].stack.size && hi > base) return true;
    }
    return false;
}

fb_runtime *fb_current_runtime(void)
{
    return fb__rt_tls;
}

const tm_ops *fb_runtime_timers(const fb_runtime *rt)
{
    return rt ? rt->timers : tm_default();
}

void fb_get_stats(const fb_runtime *rt, fb_stats *out)
{
    *out = rt->stats;
    out->stacks_mapped = rt->pool.mapped + rt->nshared;
    out->stacks_cached = rt->pool.count;
    out->stack_maps = rt->pool.maps + rt->stats.stack_maps;
}
