/* fiber_stack_pool.h - the runtime's private free list of guarded fiber stacks. */
#ifndef SWITCHYARD_FIBER_STACK_POOL_H
#define SWITCHYARD_FIBER_STACK_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "switch.h"

/*
 * A LIFO cache of stacks of one size: the stack released last is handed out first, because
 * its top pages are the likeliest to still be in the cache and the TLB. Only
 * fb__pool_get maps, only fb__pool_drain unmaps.
 */
typedef struct fb__pool {
    size_t stack_size;
    sw_stack *cached; /* array of `count` stacks, room for `room` */
    size_t count, room;
    size_t mapped; /* stacks mapped now: handed out plus cached */
    uint64_t maps; /* sw_stack_alloc calls so far */
} fb__pool;

void fb__pool_init(fb__pool *pool, size_t stack_size);
/* A stack from the cache, or a fresh mapping. Returns 0, or -1 with errno. */
int fb__pool_get(fb__pool *pool, sw_stack *out);
/* Give a stack back; nothing may run on it any more. Unmaps it if the cache cannot grow. */
void fb__pool_put(fb__pool *pool, const sw_stack *st);
/* Unmap every cached stack and free the cache itself. */
void fb__pool_drain(fb__pool *pool);

#endif
