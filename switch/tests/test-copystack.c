/* test-copystack.c - a suspended context's live part, moved out and back, is all it needs. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * What copy stacks rely on (props.copy_stack): nothing below sw_live_sp(ctx) is needed to
 * resume ctx. The peer fills frames at three call depths with patterns and suspends in the
 * deepest one; main copies [live_sp, top) out, overwrites the WHOLE stack, copies the live
 * part back to the same addresses and resumes. The peer then checks every pattern on its way
 * back up. Had live_sp been too high by even one word, a saved register or return address
 * would be garbage and the peer would fail or crash. Backends that declare no copy-stack
 * support must answer NULL.
 */
enum { STACK_SIZE = 64 * 1024, DEPTH = 3, ROUNDS = 4, WORDS = 24 };

struct mover {
    check_pair pair;
    uintptr_t lowest_local; /* the deepest frame's pattern array */
    int rounds_seen;
    int corrupt;
};

static void __attribute__((noinline)) descend(struct mover *m, int depth)
{
    volatile uint64_t pattern[WORDS];
    for (int i = 0; i < WORDS; i++)
        pattern[i] = 0x9e3779b97f4a7c15ull * (uint64_t)(depth * WORDS + i + 1);
    if (depth < DEPTH) {
        descend(m, depth + 1);
    } else {
        for (int r = 0; r < ROUNDS; r++) {
            m->lowest_local = (uintptr_t)&pattern[0];
            sw_jump(&m->pair.peer, &m->pair.main);
            m->rounds_seen++;
        }
    }
    for (int i = 0; i < WORDS; i++)
        m->corrupt += pattern[i] != 0x9e3779b97f4a7c15ull * (uint64_t)(depth * WORDS + i + 1);
}

static void mover_entry(void *arg)
{
    descend(arg, 1);
}

/* Move the peer's live part out, wipe the stack, move it back. Returns the live bytes. */
static size_t evict_and_restore(struct mover *m)
{
    char *top = (char *)m->pair.stack.base + m->pair.stack.size;
    char *sp = sw_live_sp(&m->pair.peer);
    ASSERT(sp != NULL);
    ASSERT((uintptr_t)sp >= (uintptr_t)m->pair.stack.base && sp < top);
    ASSERT_LE((uintptr_t)sp, m->lowest_local); /* the deepest local is live */
    size_t n = (size_t)(top - sp);
    char *save = malloc(n);
    ASSERT(save != NULL);
    sw_stack_copy(save, sp, n);
    char *wipe = malloc(m->pair.stack.size);
    ASSERT(wipe != NULL);
    memset(wipe, 0xa5, m->pair.stack.size);
    sw_stack_copy(m->pair.stack.base, wipe, m->pair.stack.size);
    sw_stack_copy(sp, save, n);
    free(wipe);
    free(save);
    return n;
}

int test_copy_stack(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    struct mover m = {.rounds_seen = 0};
    check_pair_init(&m.pair, b, STACK_SIZE, mover_entry, &m);
    if (!b->props.copy_stack) {
        sw_jump(&m.pair.main, &m.pair.peer);
        ASSERT(sw_live_sp(&m.pair.peer) == NULL);
        for (int r = 0; r < ROUNDS; r++)
            sw_jump(&m.pair.main, &m.pair.peer);
        ASSERT(sw_finished(&m.pair.peer));
        check_pair_destroy(&m.pair);
        printf("copy-stack/%s: not supported, as declared (sw_live_sp is NULL)\n", b->name);
        return 0;
    }
    size_t live = 0;
    sw_jump(&m.pair.main, &m.pair.peer);
    for (int r = 0; r < ROUNDS; r++) {
        ASSERT_EQ(m.rounds_seen, r);
        live = evict_and_restore(&m);
        sw_jump(&m.pair.main, &m.pair.peer);
    }
    ASSERT(sw_finished(&m.pair.peer));
    ASSERT_EQ(m.rounds_seen, ROUNDS);
    ASSERT_EQ(m.corrupt, 0);
    printf("copy-stack/%s: live part %zu bytes at depth %d, moved %d times intact\n", b->name, live,
           DEPTH, ROUNDS);
    check_pair_destroy(&m.pair);
    return 0;
}
