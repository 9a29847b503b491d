/* test-stack.c - recursion fills most of a 64 KiB stack; going past it hits the guard page. */
#include "check.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

enum {
    STACK_SIZE = 64 * 1024,
    FRAME_BYTES = 512, /* per recursion level, well under a page so no level skips the guard */
    STOP_MARGIN = 4096 /* stack-use stops this close to the bottom */
};

struct dig {
    check_pair pair;
    uintptr_t top, lo;  /* the stack's usable range */
    uintptr_t stop_at;  /* recursion stops below this address; 0 = never (overflow) */
    uintptr_t deepest;  /* lowest frame address reached */
    unsigned levels;    /* deepest level reached */
    unsigned corrupted; /* bytes that changed under a frame while deeper levels ran */
};

static uintptr_t launder(const void *p)
{
    uintptr_t v = (uintptr_t)p;
    __asm__("" : "+r"(v));
    return v;
}

/* Each level fills its own buffer, recurses, then checks that the buffer survived; the check
 * after the call also keeps the compiler from turning the recursion into a loop. */
static void __attribute__((noinline)) dig(struct dig *d, unsigned level)
{
    volatile unsigned char buf[FRAME_BYTES];
    for (size_t i = 0; i < sizeof buf; i += 16)
        buf[i] = (unsigned char)(level * 7 + i);
    uintptr_t here = launder((const void *)buf);
    if (here < d->deepest) d->deepest = here;
    if (level > d->levels) d->levels = level;
    /* A bound that only matters when the guard page is missing: 64 MiB of frames. */
    if (here > d->stop_at && level < 131072) dig(d, level + 1);
    for (size_t i = 0; i < sizeof buf; i += 16)
        d->corrupted += buf[i] != (unsigned char)(level * 7 + i);
}

static void dig_entry(void *arg)
{
    struct dig *d = arg;
    dig(d, 1);
}

static void dig_init(struct dig *d, const sw_backend *b, bool overflow)
{
    *d = (struct dig){.deepest = UINTPTR_MAX};
    check_pair_init(&d->pair, b, STACK_SIZE, dig_entry, d);
    d->lo = (uintptr_t)d->pair.stack.base;
    d->top = d->lo + d->pair.stack.size;
    d->stop_at = overflow ? 0 : d->lo + STOP_MARGIN;
}

void check_stack_use(const sw_backend *b)
{
    struct dig d;
    dig_init(&d, b, false);
    sw_jump(&d.pair.main, &d.pair.peer);
    ASSERT_EQ(sw_finished(&d.pair.peer), true);
    size_t used = d.top - d.deepest;
    printf("%s: %u levels used %zu of %zu stack bytes\n", b->name, d.levels, used,
           (size_t)STACK_SIZE);
    /* "Most of it": everything but the margin and one frame. */
    ASSERT_GE(used, STACK_SIZE - STOP_MARGIN - 2 * FRAME_BYTES);
    ASSERT_LE(used, STACK_SIZE);
    ASSERT_EQ(d.corrupted, 0);
    check_pair_destroy(&d.pair);
}

int test_stack_use(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    check_stack_use(b);
    return 0;
}

/* In the child: install the guard, then recurse without a bottom. */
static void overflow_child(void *arg)
{
    const sw_backend *b = arg;
    struct dig d;
    ASSERT_EQ(sw_overflow_guard_init(), 0);
    dig_init(&d, b, true);
    sw_jump(&d.pair.main, &d.pair.peer);
    fprintf(stderr, "the recursion ended after %u levels without a fault\n", d.levels);
}

int test_overflow(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    check_child child;
    char how[64];
    check_run_child(overflow_child, (void *)b, &child);
    check_describe_status(child.status, how, sizeof how);
    printf("%s: child %s, stderr:\n%s", b->name, how, child.err);
    /* The guard's handler reports and aborts; dying by SIGSEGV is accepted too (a handler may
     * re-raise the fault), but only together with the message: never silently. */
    ASSERT(WIFSIGNALED(child.status));
    ASSERT(WTERMSIG(child.status) == SIGABRT || WTERMSIG(child.status) == SIGSEGV);
    ASSERT_CONTAINS(child.err, "fiber stack overflow");
    /* One line: the message ends with a newline and nothing else about the overflow follows. */
    const char *msg = strstr(child.err, "fiber stack overflow");
    ASSERT_PTR_NE(strchr(msg, '\n'), NULL);
    ASSERT_PTR_EQ(strstr(strchr(msg, '\n'), "fiber stack overflow"), NULL);
    return 0;
}
