/* test-lifecycle.c - the entry-return rule: a returning entry resumes its link, never UB. */
#include "check.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

struct chain {
    sw_ctx main, a, b, c, d;
    sw_stack sa, sb, sc, sd;
    char trace[16];
    int len;
};

static void note(struct chain *ch, char c)
{
    ASSERT_LT(ch->len, (int)sizeof ch->trace - 1);
    ch->trace[ch->len++] = c;
    ch->trace[ch->len] = '\0';
}

static void record_a(void *arg)
{
    note(arg, 'A');
}

static void record_b(void *arg)
{
    note(arg, 'B');
}

static void record_c(void *arg)
{
    note(arg, 'C');
}

/* d suspends itself once, so c's link points at a context in the middle of its entry. */
static void record_d(void *arg)
{
    struct chain *ch = arg;
    note(ch, 'd');
    sw_jump(&ch->d, &ch->main);
    note(ch, 'D');
}

static void simple_return(const sw_backend *b, struct chain *ch)
{
    ASSERT_EQ(sw_make(&ch->a, b, &ch->sa, record_a, ch, &ch->main), 0);
    ASSERT_EQ(ch->a.state, SW_FRESH);
    ASSERT_EQ(sw_finished(&ch->a), false);
    sw_jump(&ch->main, &ch->a);
    ASSERT_STR_EQ(ch->trace, "A");
    ASSERT_EQ(sw_finished(&ch->a), true);
    ASSERT_EQ(ch->main.state, SW_ACTIVE);
}

/* The link may be a fresh context (it starts) or a suspended one (it resumes). */
static void chained_links(const sw_backend *b, struct chain *ch)
{
    ch->len = 0;
    ASSERT_EQ(sw_make(&ch->a, b, &ch->sa, record_a, ch, &ch->b), 0);
    ASSERT_EQ(sw_make(&ch->b, b, &ch->sb, record_b, ch, &ch->main), 0);
    sw_jump(&ch->main, &ch->a);
    ASSERT_STR_EQ(ch->trace, "AB");
    ASSERT(sw_finished(&ch->a) && sw_finished(&ch->b));

    ch->len = 0;
    ASSERT_EQ(sw_make(&ch->d, b, &ch->sd, record_d, ch, &ch->main), 0);
    ASSERT_EQ(sw_make(&ch->c, b, &ch->sc, record_c, ch, &ch->d), 0);
    sw_jump(&ch->main, &ch->d);
    ASSERT_STR_EQ(ch->trace, "d");
    sw_jump(&ch->main, &ch->c);
    ASSERT_STR_EQ(ch->trace, "dCD");
    ASSERT(sw_finished(&ch->c) && sw_finished(&ch->d));
}

/* A finished context's stack may carry a new context right away. */
static void reuse_stack(const sw_backend *b, struct chain *ch)
{
    for (int round = 0; round < 3; round++) {
        ch->len = 0;
        ASSERT_EQ(sw_make(&ch->a, b, &ch->sa, record_a, ch, &ch->main), 0);
        sw_jump(&ch->main, &ch->a);
        ASSERT_STR_EQ(ch->trace, "A");
        ASSERT_EQ(sw_finished(&ch->a), true);
    }
}

static void chain_init(const sw_backend *b, struct chain *ch)
{
    *ch = (struct chain){.len = 0};
    ASSERT_EQ(sw_init_self(&ch->main, b), 0);
    ASSERT_EQ(sw_stack_alloc(&ch->sa, 64 * 1024), 0);
    ASSERT_EQ(sw_stack_alloc(&ch->sb, 64 * 1024), 0);
    ASSERT_EQ(sw_stack_alloc(&ch->sc, 64 * 1024), 0);
    ASSERT_EQ(sw_stack_alloc(&ch->sd, 64 * 1024), 0);
}

static void chain_destroy(struct chain *ch)
{
    sw_stack_free(&ch->sa);
    sw_stack_free(&ch->sb);
    sw_stack_free(&ch->sc);
    sw_stack_free(&ch->sd);
}

void check_entry_return(const sw_backend *b)
{
    struct chain ch;
    chain_init(b, &ch);
    simple_return(b, &ch);
    chained_links(b, &ch);
    reuse_stack(b, &ch);
    chain_destroy(&ch);
}

int test_entry_return(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    check_entry_return(b);
    return 0;
}

/* In the child: finish a context, then jump to it again. sw_jump must refuse and abort. */
static void jump_to_finished(void *arg)
{
    struct chain ch;
    chain_init(arg, &ch);
    simple_return(arg, &ch);
    sw_jump(&ch.main, &ch.a);
    fprintf(stderr, "sw_jump to a finished context returned\n");
}

int test_finished_jump(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    check_child child;
    char how[64];
    check_run_child(jump_to_finished, (void *)b, &child);
    printf("%s: child %s, stderr:\n%s", b->name,
           check_describe_status(child.status, how, sizeof how), child.err);
    ASSERT(WIFSIGNALED(child.status));
    ASSERT_EQ(WTERMSIG(child.status), SIGABRT);
    ASSERT_CONTAINS(child.err, "switch: jump to a finished context\n");
    return 0;
}
