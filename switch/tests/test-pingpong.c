/* test-pingpong.c - values handed back and forth across 10^6 switches arrive complete, in order. */
#include "check.h"

#include <stdlib.h>

enum { PINGPONG_SWITCHES = 1000000 };

/* main sends 0, 2, 4, ... and the peer answers each v with v + 1; every hop is one switch. */
struct pingpong {
    check_pair pair;
    long mailbox;
    long switches; /* switches made so far, counted by whoever makes one */
    long limit;    /* total switches, even: the last one is the peer's entry returning */
    long received; /* messages the peer took */
};

static void pong(void *arg)
{
    struct pingpong *pp = arg;
    for (long expect = 0;; expect += 2) {
        ASSERT_EQ(pp->mailbox, expect);
        pp->received++;
        pp->switches++;
        if (pp->switches == pp->limit) return; /* returning switches to main: the last hop */
        pp->mailbox = expect + 1;
        sw_jump(&pp->pair.peer, &pp->pair.main);
    }
}

void check_pingpong(const sw_backend *b, long switches)
{
    struct pingpong pp = {.limit = switches};
    ASSERT_EQ(switches % 2, 0);
    check_pair_init(&pp.pair, b, 64 * 1024, pong, &pp);
    long sent = 0;
    for (long v = 0;; v += 2) {
        pp.mailbox = v;
        pp.switches++;
        sent++;
        sw_jump(&pp.pair.main, &pp.pair.peer);
        if (sw_finished(&pp.pair.peer)) break;
        ASSERT_EQ(pp.mailbox, v + 1);
    }
    ASSERT_EQ(pp.switches, switches);
    ASSERT_EQ(sent, switches / 2);
    ASSERT_EQ(pp.received, switches / 2);
    check_pair_destroy(&pp.pair);
}

int test_pingpong(const sw_backend *b, int argc, char **argv)
{
    long n = argc > 0 ? atol(argv[0]) : PINGPONG_SWITCHES;
    check_pingpong(b, n);
    return 0;
}
