/* test-many.c - 10,000 live contexts, each entered, all finished and freed without a leak. */
#include "check.h"

#include <stdio.h>
#include <sys/mman.h>

enum { MANY = 10000 };

struct many_slot {
    sw_ctx ctx;
    sw_stack stack;
    sw_ctx *main;
    int entered, done;
};

/* Every context suspends once in the middle of its entry, so all MANY are alive at once. */
static void entry(void *arg)
{
    struct many_slot *s = arg;
    s->entered++;
    sw_jump(&s->ctx, s->main);
    s->done++;
}

/* One full create-run-free cycle, so lazily created process state (thread-local storage,
 * stdio buffers, an alternate signal stack, the allocator's arenas) exists before counting. */
static void warm_up(const sw_backend *b, sw_ctx *main)
{
    struct many_slot s = {.main = main};
    ASSERT_EQ(sw_stack_alloc(&s.stack, SW_STACK_MIN), 0);
    ASSERT_EQ(sw_make(&s.ctx, b, &s.stack, entry, &s, main), 0);
    sw_jump(main, &s.ctx);
    sw_jump(main, &s.ctx);
    ASSERT_EQ(sw_finished(&s.ctx), true);
    sw_stack_free(&s.stack);
}

int test_many(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    sw_ctx main;
    ASSERT_EQ(sw_init_self(&main, b), 0);
    warm_up(b, &main);
    long maps_start = check_maps_count();

    /* The slots come straight from mmap, not malloc, so the allocator's own mappings do not
     * blur the count: this one mapping is the only one not a stack. */
    size_t bytes = MANY * sizeof(struct many_slot);
    struct many_slot *slots =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_PTR_NE(slots, MAP_FAILED);
    for (int i = 0; i < MANY; i++) {
        struct many_slot *s = &slots[i];
        s->main = &main;
        ASSERT_EQ(sw_stack_alloc(&s->stack, SW_STACK_MIN), 0);
        ASSERT_EQ(sw_make(&s->ctx, b, &s->stack, entry, s, &main), 0);
    }
    for (int i = 0; i < MANY; i++) {
        sw_jump(&main, &slots[i].ctx);
        ASSERT_EQ(slots[i].entered, 1);
        ASSERT_EQ(sw_finished(&slots[i].ctx), false);
    }
    long maps_live = check_maps_count();
    /* The documented cost: two mappings per guarded stack. The slot array adds one, and the
     * kernel may merge a mapping at either end of the run with an anonymous neighbour. */
    ASSERT_GE(maps_live - maps_start, 2 * MANY - 1);
    ASSERT_LE(maps_live - maps_start, 2 * MANY + 1);

    /* Finish them in the opposite order: each entry returns and its link (main) resumes. */
    for (int i = MANY - 1; i >= 0; i--) {
        sw_jump(&main, &slots[i].ctx);
        ASSERT_EQ(sw_finished(&slots[i].ctx), true);
        ASSERT_EQ(slots[i].done, 1);
    }
    for (int i = 0; i < MANY; i++) {
        ASSERT_EQ(slots[i].entered, 1);
        ASSERT_EQ(slots[i].done, 1);
        sw_stack_free(&slots[i].stack);
    }
    ASSERT_EQ(munmap(slots, bytes), 0);
    long maps_end = check_maps_count();
    /* Printed only now: stdio's first use allocates, and an allocation can map memory. */
    printf("%s: /proc/self/maps lines: %ld at start, %ld with %d live contexts, %ld at the end\n",
           b->name, maps_start, maps_live, MANY, maps_end);
    ASSERT_EQ(maps_end, maps_start);
    return 0;
}
