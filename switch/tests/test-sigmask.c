/* test-sigmask.c - the signal mask is per context iff the backend documents it so. */
#include "check.h"

#include <signal.h>
#include <stdio.h>

/* Two signals whose default action is to be ignored, so a slip cannot kill the test. */
#define SIG_PEER SIGWINCH
#define SIG_MAIN SIGURG

static bool blocked(int sig)
{
    sigset_t now;
    ASSERT_EQ(sigprocmask(SIG_SETMASK, NULL, &now), 0);
    return sigismember(&now, sig) == 1;
}

static void change(int how, int sig)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    ASSERT_EQ(sigprocmask(how, &one, NULL), 0);
}

/* The first signal on which two masks differ, or 0. */
static int mask_difference(const sigset_t *a, const sigset_t *b)
{
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(a, sig) != sigismember(b, sig)) return sig;
    return 0;
}

struct sigmask {
    check_pair pair;
    sigset_t at_entry;
    bool peer_saw_main_block;
};

/* A context that leaves the mask alone: whatever the backend does to enter and leave it (a
 * signal-stack bootstrap, say) must not change the mask anybody sees. */
static void quiet_entry(void *arg)
{
    struct sigmask *s = arg;
    ASSERT_EQ(sigprocmask(SIG_SETMASK, NULL, &s->at_entry), 0);
}

static void check_mask_untouched(const sw_backend *b)
{
    struct sigmask s;
    sigset_t before, after;
    ASSERT_EQ(sigprocmask(SIG_SETMASK, NULL, &before), 0);
    check_pair_init(&s.pair, b, 64 * 1024, quiet_entry, &s);
    sw_jump(&s.pair.main, &s.pair.peer);
    ASSERT_EQ(sw_finished(&s.pair.peer), true);
    ASSERT_EQ(sigprocmask(SIG_SETMASK, NULL, &after), 0);
    ASSERT_EQ(mask_difference(&before, &s.at_entry), 0);
    ASSERT_EQ(mask_difference(&before, &after), 0);
    check_pair_destroy(&s.pair);
}

static void peer_entry(void *arg)
{
    struct sigmask *s = arg;
    change(SIG_BLOCK, SIG_PEER);
    sw_jump(&s->pair.peer, &s->pair.main);
    s->peer_saw_main_block = blocked(SIG_MAIN);
}

int test_sigmask(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    change(SIG_UNBLOCK, SIG_PEER);
    change(SIG_UNBLOCK, SIG_MAIN);
    check_mask_untouched(b);

    struct sigmask s;
    check_pair_init(&s.pair, b, 64 * 1024, peer_entry, &s);
    sw_jump(&s.pair.main, &s.pair.peer);
    bool own1 = !blocked(SIG_PEER); /* the peer blocked SIG_PEER in its own mask */
    change(SIG_BLOCK, SIG_MAIN);
    sw_jump(&s.pair.main, &s.pair.peer);
    ASSERT_EQ(sw_finished(&s.pair.peer), true);
    bool own2 = !s.peer_saw_main_block;
    bool own3 = !blocked(SIG_PEER) && blocked(SIG_MAIN); /* after the finishing switch */

    printf("%s: documented switches_sigmask=%d, observed per-context=%d,%d,%d\n", b->name,
           b->props.switches_sigmask, own1, own2, own3);
    ASSERT_EQ(own1, b->props.switches_sigmask);
    ASSERT_EQ(own2, b->props.switches_sigmask);
    ASSERT_EQ(own3, b->props.switches_sigmask);
    check_pair_destroy(&s.pair);
    return 0;
}
