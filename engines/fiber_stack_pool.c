/* fiber_stack_pool.c - recycles guarded fiber stacks so spawning rarely calls mmap. */
#include "fiber_stack_pool.h"

#include <stdlib.h>

void fb__pool_init(fb__pool *pool, size_t stack_size)
{
    *pool = (fb__pool){.stack_size = stack_size};
}

int fb__pool_get(fb__pool *pool, sw_stack *out)
{
    if (pool->count > 0) {
        *out = pool->cached[--pool->count];
        return 0;
    }
    if (sw_stack_alloc(out, pool->stack_size) != 0) return -1;
    pool->mapped++;
    pool->maps++;
    return 0;
}

/* Under ASan, sw_make unpoisons a reused stack, so stale redzones never reach a new fiber. */
void fb__pool_put(fb__pool *pool, const sw_stack *st)
{
    if (pool->count == pool->room) {
        size_t room = pool->room ? 2 * pool->room : 16;
        sw_stack *grown = realloc(pool->cached, room * sizeof *grown);
        if (!grown) {
            sw_stack dead = *st;
            sw_stack_free(&dead);
            pool->mapped--;
            return;
        }
        pool->cached = grown;
        pool->room = room;
    }
    pool->cached[pool->count++] = *st;
}

void fb__pool_drain(fb__pool *pool)
{
    while (pool->count > 0) {
        sw_stack_free(&pool->cached[--pool->count]);
        pool->mapped--;
    }
    free(pool->cached);
    pool->cached = NULL;
    pool->room = 0;
}
