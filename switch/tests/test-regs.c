/* test-regs.c - the callee-saved registers keep their values across a switch, in both contexts. */
#include "check.h"

#include <stdlib.h>

enum { REGS_ROUNDS = 64 };

#if defined(__x86_64__)
static const char *const reg_names[CHECK_REGS] = {"rbx", "rbp", "r12", "r13", "r14", "r15"};
#elif defined(__aarch64__)
static const char *const reg_names[CHECK_REGS] = {"x19", "x20", "x21", "x22", "x23", "x24", "x25",
                                                  "x26", "x27", "x28", "x29", "d8",  "d9",  "d10",
                                                  "d11", "d12", "d13", "d14", "d15"};
#endif

typedef void (*jump_fn)(sw_ctx *from, sw_ctx *to);

struct regs {
    check_pair pair;
    int rounds;
    /* The switch used in round r is jumps[r % njumps]: the public, checked sw_jump, and (outside
     * ASan builds) the backend's raw jump with no C wrapper that could save the registers for
     * it. ASan builds only use sw_jump: it annotates every switch for ASan. */
    jump_fn jumps[2];
    int njumps;
};

/* A value no other (context, round, register) uses, with high and low bits set. */
static uint64_t pattern(int who, int round, int reg)
{
    return 0xA5C3000000000000ull ^ ((uint64_t)(who + 1) << 40) ^ ((uint64_t)round << 16) ^
           ((uint64_t)(reg + 1) << 4) ^ 0x9;
}

static void switch_and_check(struct regs *r, int who, int round, sw_ctx *from, sw_ctx *to)
{
    uint64_t in[CHECK_REGS], out[CHECK_REGS];
    for (int i = 0; i < CHECK_REGS; i++)
        in[i] = pattern(who, round, i);
    check_regs_switch(r->jumps[round % r->njumps], from, to, in, out);
    for (int i = 0; i < CHECK_REGS; i++)
        if (out[i] != in[i])
            check_fail(__FILE__, __LINE__,
                       "%s: %s lost its value across round %d's switch: 0x%016llx vs 0x%016llx",
                       who ? "peer" : "main", reg_names[i], round, (unsigned long long)out[i],
                       (unsigned long long)in[i]);
}

/* The peer loads its own patterns (clobbering main's) before every switch back to main. */
static void peer_entry(void *arg)
{
    struct regs *r = arg;
    for (int round = 0; round < r->rounds; round++)
        switch_and_check(r, 1, round, &r->pair.peer, &r->pair.main);
}

void check_regs(const sw_backend *b, int rounds)
{
    struct regs r = {.rounds = rounds, .jumps = {sw_jump, b->jump}, .njumps = 2};
#ifdef SWITCHYARD_ASAN
    r.njumps = 1;
#endif
    check_pair_init(&r.pair, b, 64 * 1024, peer_entry, &r);
    /* Round 0 enters the fresh peer; the last round resumes it for the last time, so its entry
     * returns and the backend's finishing path switches back here. */
    for (int round = 0; round <= rounds; round++) {
        ASSERT_EQ(sw_finished(&r.pair.peer), false);
        switch_and_check(&r, 0, round, &r.pair.main, &r.pair.peer);
    }
    ASSERT_EQ(sw_finished(&r.pair.peer), true);
    check_pair_destroy(&r.pair);
}

int test_regs(const sw_backend *b, int argc, char **argv)
{
    check_regs(b, argc > 0 ? atoi(argv[0]) : REGS_ROUNDS);
    return 0;
}
