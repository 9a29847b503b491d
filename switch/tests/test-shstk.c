/* test-shstk.c - shadow stacks: a backend that does not switch them is refused, and one that
 * does keeps working, where the process really runs with one. */
#include "check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct refusal {
    const sw_backend *b;
};

static void never_runs(void *arg)
{
    (void)arg;
    abort();
}

/* In a child, so that what the switch layer says on stderr can be read. */
static void refuse_faked(void *arg)
{
    const sw_backend *b = ((struct refusal *)arg)->b;
    sw_ctx self, ctx;
    sw_stack st;
    ASSERT_EQ(sw_stack_alloc(&st, 64 * 1024), 0);
    sw__fake_shadow_stack(1);
    ASSERT(sw_shadow_stack_enabled(NULL));
    const char *why = sw_backend_refusal(b);
    if (b->props.shadow_stack) {
        ASSERT_PTR_EQ(why, NULL);
        check_pingpong(b, 1000);
    } else {
        ASSERT(why && strstr(why, b->name) && strstr(why, "refused"));
        errno = 0;
        ASSERT_EQ(sw_init_self(&self, b), -1);
        ASSERT_EQ(errno, ENOTSUP);
        /* sw_make is not refused: nothing can switch to its context without a self. */
        ASSERT_EQ(sw_make(&ctx, b, &st, never_runs, NULL, &self), 0);
    }
    sw__fake_shadow_stack(0);
    ASSERT_PTR_EQ(sw_backend_refusal(b), NULL);
    check_pingpong(b, 1000);
    sw__fake_shadow_stack(-1);
    sw_stack_free(&st);
}

/* With the shadow stack faked on, a backend that does not declare it is refused by
 * sw_init_self, with ENOTSUP and one line on stderr naming it; one that declares it
 * runs. Faked off, every backend runs. */
int test_shadow_stack_refusal(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    struct refusal r = {b};
    check_child child;
    check_run_child(refuse_faked, &r, &child);
    char how[64];
    check_describe_status(child.status, how, sizeof how);
    printf("%s: declared shadow_stack=%d; faked on: child %s, stderr:\n%s", b->name,
           b->props.shadow_stack, how, child.err);
    ASSERT(WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0);
    char line[128];
    snprintf(line, sizeof line, "switch: backend %s refused: ", b->name);
    /* Said once, though refused twice. */
    const char *said = strstr(child.err, line);
    ASSERT_EQ(said != NULL, !b->props.shadow_stack);
    ASSERT(!said || !strstr(said + 1, line));
    return 0;
}

/* The real thing, where the process runs with a shadow stack (CTest sets
 * GLIBC_TUNABLES=glibc.cpu.x86_shstk=on): a backend that declares it switches 10^5 times, one
 * that does not is refused before its first switch. */
int test_shadow_stack(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *why_not;
    if (!sw_shadow_stack_enabled(&why_not)) {
        printf("not run: %s: no shadow stack in this process: %s\n", b->name, why_not);
        return CHECK_SKIP;
    }
    if (b->props.shadow_stack) {
        check_pingpong(b, 100000);
    } else {
        sw_ctx self;
        ASSERT_EQ(sw_init_self(&self, b), -1);
        ASSERT_EQ(errno, ENOTSUP);
    }
    printf("%s: shadow stack enabled; declared shadow_stack=%d, %s\n", b->name,
           b->props.shadow_stack, b->props.shadow_stack ? "100000 switches ran" : "refused");
    return 0;
}
