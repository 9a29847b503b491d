/* fiber_stack_pool.c - recycles guarded fiber stacks so spawning rarely calls mmap. */
#include "fiber_stack_pool.h"

#include <stdlib.h>

#ifdef SWITCHYARD_ASAN
#include <sanitizer/asan_interface.h>
#endif

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

void fb__pool_put(fb__pool *pool, const sw_stack *st)
{
#ifdef SWITCHYARD_ASAN
    /* A fiber that left through fb_exit or never ran to the end may leave poisoned redzones
     * behind; the next fiber on this stack must start from clean shadow memory. */
    ASAN_UNPOISON_MEMORY_REGION(st->base, st->size);
#endif
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
