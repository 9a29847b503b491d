/* test-sched.c - the fiber scheduler's tests: order, join, exit, switches per hop, churn, the
 * poller, deadlock, configuration; the cases about its stacks are in test-sched-stacks.c. */
#include "test-sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* usage: test-sched CASE POLICY BACKEND [guarded|copy[:K]]; one CTest test per combination,
 * each its own process. */

/* The run's configuration, from the command line (main). */
fb_config config;
bool copy_mode;
unsigned shared_k;

fb_runtime *new_runtime(void)
{
    fb_runtime *rt = fb_runtime_new(&config);
    if (!rt) {
        perror("fb_runtime_new");
        exit(1);
    }
    return rt;
}

fb_stats stats_of(fb_runtime *rt)
{
    fb_stats st;
    fb_get_stats(rt, &st);
    return st;
}

/* ---- order: N fibers yielding M times run in exact round-robin order -------------------- */

enum { ORDER_N = 5, ORDER_M = 20 };
static int trace[ORDER_N * (ORDER_M + 1)];
static int traced;

static void order_fiber(void *arg)
{
    int id = (int)(long)arg;
    for (int i = 0; i < ORDER_M; i++) {
        trace[traced++] = id;
        fb_yield();
    }
    trace[traced++] = id;
}

void test_order(void)
{
    fb_runtime *rt = new_runtime();
    for (long i = 0; i < ORDER_N; i++)
        ASSERT_TRUE(fb_spawn(rt, order_fiber, (void *)i));
    ASSERT_EQ(fb_run(rt), 0);
    ASSERT_EQ(traced, ORDER_N * (ORDER_M + 1));
    for (int i = 0; i < traced; i++)
        ASSERT_EQ(trace[i], i % ORDER_N);
    fb_stats st = stats_of(rt);
    ASSERT_EQ(st.spawned, ORDER_N);
    ASSERT_EQ(st.finished, ORDER_N);
    ASSERT_EQ(st.live, 0);
    ASSERT_EQ(st.hops, ORDER_N * ORDER_M);
    fb_runtime_free(rt);
}

/* ---- join: running and already finished targets, and the refusals ---------------------- */

static int join_log[8], join_logged;

static void note(void *arg)
{
    join_log[join_logged++] = (int)(long)arg;
}

static void slow_note(void *arg)
{
    for (int i = 0; i < 5; i++)
        fb_yield();
    note(arg);
}

static void second_joiner(void *arg)
{
    /* By the fourth yield `joiner` waits in fb_join(slow); slow needs five: a second join
     * of the same fiber is refused. */
    for (int i = 0; i < 4; i++)
        fb_yield();
    errno = 0;
    ASSERT_EQ(fb_join(arg), -1);
    ASSERT_EQ(errno, EINVAL);
}

static void joiner(void *arg)
{
    (void)arg;
    fb_runtime *rt = fb_current_runtime();
    fiber *done_early = fb_spawn_joinable(rt, note, (void *)1);
    fiber *slow = fb_spawn(rt, slow_note, (void *)2);
    ASSERT_TRUE(done_early && slow);
    ASSERT_TRUE(fb_spawn(rt, second_joiner, slow));
    for (int i = 0; i < 3; i++)
        fb_yield(); /* done_early runs to its end meanwhile */
    ASSERT_EQ(join_logged, 1);
    ASSERT_EQ(fb_join(done_early), 0); /* already finished: returns at once */
    ASSERT_EQ(fb_join(slow), 0);       /* still running: waits */
    ASSERT_EQ(join_logged, 2);
    ASSERT_EQ(join_log[1], 2);
    errno = 0;
    ASSERT_EQ(fb_join(fb_self()), -1);
    ASSERT_EQ(errno, EINVAL);
    join_log[join_logged++] = 3;
}

static void nested_run(void *arg)
{
    errno = 0;
    ASSERT_EQ(fb_run(arg), -1); /* the scheduler context is busy: refused */
    ASSERT_EQ(errno, EINVAL);
}

void test_join(void)
{
    fb_runtime *rt = new_runtime();
    ASSERT_TRUE(fb_spawn(rt, joiner, NULL));
    errno = 0;
    ASSERT_EQ(fb_join(NULL), -1); /* outside a fiber */
    ASSERT_EQ(fb_run(rt), 0);
    ASSERT_EQ(join_logged, 3);
    ASSERT_EQ(join_log[0] * 100 + join_log[1] * 10 + join_log[2], 123);
    fb_stats st = stats_of(rt);
    ASSERT_EQ(st.finished, 4);
    ASSERT_EQ(st.live, 0);
    fb_runtime_free(rt);
}

/* ---- exit: fb_exit from a nested call ends the fiber; the stack is reused afterwards ---- */

static int after_exit, exit_count;

/* Calls down `depth` frames, then leaves the fiber from the innermost one. */
static void __attribute__((noinline)) nested_exit(int depth)
{
    volatile char pad[256];
    pad[0] = (char)depth;
    if (depth > 0) {
        nested_exit(depth - 1);
    } else if (exit_count >= 0) {
        exit_count++;
        fb_exit();
    }
    after_exit += pad[0] + 1; /* never reached: no frame returns */
}

static void exiting(void *arg)
{
    (void)arg;
    fb_yield();
    nested_exit(8);
}

static void exit_joiner(void *arg)
{
    (void)arg;
    fb_runtime *rt = fb_current_runtime();
    for (int round = 0; round < 3; round++) {
        fiber *f = fb_spawn_joinable(rt, exiting, NULL);
        ASSERT_TRUE(f);
        ASSERT_EQ(fb_join(f), 0);
    }
}

void test_exit(void)
{
    fb_runtime *rt = new_runtime();
    ASSERT_TRUE(fb_spawn(rt, exit_joiner, NULL));
    ASSERT_EQ(fb_run(rt), 0);
    ASSERT_EQ(exit_count, 3);
    ASSERT_EQ(after_exit, 0);
    fb_stats st = stats_of(rt);
    ASSERT_EQ(st.finished, 4);
    /* The exited fibers' stacks were recycled (copy mode: only the shared ones exist). */
    ASSERT_LE(st.stack_maps, copy_mode ? shared_k : 2);
    fb_runtime_free(rt);
}

/* ---- hops: switches per hop measured, about 2 for star and 1 for ring -------------------- */

enum { HOPS_N = 16, HOPS_M = 1000 };

static void yielder(void *arg)
{
    long m = (long)arg;
    for (long i = 0; i < m; i++)
        fb_yield();
}

void test_hops(void)
{
    fb_runtime *rt = new_runtime();
    for (int i = 0; i < HOPS_N; i++)
        ASSERT_TRUE(fb_spawn(rt, yielder, (void *)(long)HOPS_M));
    ASSERT_EQ(fb_run(rt), 0);
    fb_stats st = stats_of(rt);
    ASSERT_EQ(st.hops, HOPS_N * HOPS_M);
    double per_hop = (double)st.switches / (double)st.hops;
    printf("%s: %llu switches / %llu hops = %.4f per hop\n", fb_policy_name(config.policy),
           (unsigned long long)st.switches, (unsigned long long)st.hops, per_hop);
    /* Star: two per hop plus the entries and exits; ring: one per hop plus the same, and one
     * more for each hop handed to the scheduler because both fibers share a stack. */
    uint64_t ring_switches = st.switches - st.handoffs;
    if (config.policy == FB_STAR) {
        ASSERT_EQ(st.switches, 2 * HOPS_N * HOPS_M + 2 * HOPS_N);
        ASSERT_EQ(st.handoffs, 0);
    } else {
        ASSERT_LE(ring_switches, HOPS_N * HOPS_M + 2 * HOPS_N + 1);
        ASSERT_LE(HOPS_N * HOPS_M, ring_switches);
    }
    double own_per_hop = (double)ring_switches / (double)st.hops;
    ASSERT_TRUE(config.policy == FB_STAR ? per_hop > 1.95 && per_hop < 2.05
                                         : own_per_hop > 0.99 && own_per_hop < 1.05);
    if (!copy_mode) {
        ASSERT_EQ(st.handoffs + st.stack_saves + st.stack_restores + st.bytes_saved, 0);
    } else {
        /* Round-robin over more fibers than stacks: every resume finds another fiber's frames
         * on the stack, so each one is a restore (the first runs make the context instead). */
        printf("copy:%u: %llu saves, %llu restores, %.0f bytes per restore, %llu handoffs\n",
               shared_k, (unsigned long long)st.stack_saves, (unsigned long long)st.stack_restores,
               (double)st.bytes_restored / (double)st.stack_restores,
               (unsigned long long)st.handoffs);
        ASSERT_EQ(st.stack_restores, HOPS_N * HOPS_M);
        ASSERT_LE(st.stack_saves, st.stack_restores + HOPS_N);
        ASSERT_LE(st.stack_restores, st.stack_saves + shared_k);
        ASSERT_LE(64 * st.stack_restores, st.bytes_restored);
        ASSERT_LE(st.bytes_restored, 2048 * st.stack_restores);
        ASSERT_EQ(st.save_bytes, 0); /* every finished fiber's buffer was freed */
        if (config.policy == FB_RING && shared_k == 1)
            ASSERT_LE(HOPS_N * HOPS_M - HOPS_N - 1, st.handoffs);
    }
    fb_runtime_free(rt);
}

/* ---- churn: 10,000 fibers spawn and finish on recycled stacks ---------------------------- */

enum { CHURN_WAVES = 100, CHURN_WAVE = 100 };
static long churned;

static void short_lived(void *arg)
{
    (void)arg;
    churned++;
    fb_yield();
}

static void spawner(void *arg)
{
    (void)arg;
    fb_runtime *rt = fb_current_runtime();
    fiber *wave[CHURN_WAVE];
    for (int w = 0; w < CHURN_WAVES; w++) {
        for (int i = 0; i < CHURN_WAVE; i++)
            ASSERT_TRUE(wave[i] = fb_spawn_joinable(rt, short_lived, NULL));
        for (int i = 0; i < CHURN_WAVE; i++)
            ASSERT_EQ(fb_join(wave[i]), 0);
        ASSERT_LE(stats_of(rt).stacks_mapped, CHURN_WAVE + 1);
    }
}

void test_churn(void)
{
    fb_runtime *rt = new_runtime();
    ASSERT_TRUE(fb_spawn(rt, spawner, NULL));
    ASSERT_EQ(fb_run(rt), 0);
    fb_stats st = stats_of(rt);
    ASSERT_EQ(churned, CHURN_WAVES * CHURN_WAVE);
    ASSERT_EQ(st.spawned, CHURN_WAVES * CHURN_WAVE + 1);
    ASSERT_EQ(st.finished, st.spawned);
    ASSERT_LE(st.stack_maps, CHURN_WAVE + 1); /* one mapping per concurrent fiber, not per spawn */
    if (copy_mode) {
        ASSERT_EQ(st.stacks_mapped, shared_k); /* the shared stacks, nothing else */
        ASSERT_EQ(st.stack_maps, shared_k);
        ASSERT_EQ(st.save_bytes, 0);
    } else {
        ASSERT_EQ(st.stacks_cached, st.stacks_mapped);
    }
    printf("%llu fibers on %llu stack mappings\n", (unsigned long long)st.spawned,
           (unsigned long long)st.stack_maps);
    fb_runtime_free(rt);
}

/* ---- poller: a fake event engine wakes parked fibers ------------------------------------- */

/*
 * Workers park on the fake poller WORK_ROUNDS times each; busy fibers only yield; a late
 * worker starts parking only once the busy fibers are gone, so that nothing is runnable. The
 * fake poller checks the hook's rules on every call: timeout 0 exactly when fibers are
 * runnable (the test knows how many: alive minus parked), -1 when none is, and never more
 * hops than there are fibers between two polls. It wakes one parked fiber per call, with a
 * value (fb_wake_with) or without (fb_wake, 0), and the fiber checks what it was woken with.
 */
enum { WORKERS = 4, BUSY = 2, LATE = 1, WORK_ROUNDS = 10, BUSY_YIELDS = 200 };
enum { TOTAL = WORKERS + BUSY + LATE };

static struct fake_poller {
    fiber *parked[TOTAL];
    int nparked;
    int alive; /* test fibers not yet finished */
    long nonblocking, blocking;
    unsigned long long last_hops;
    int workers_done, busy_done, workers_done_while_busy;
    unsigned wakes;
    struct {
        fiber *f;
        uint16_t with; /* the value of f's last wake */
    } sent[TOTAL];
} fp;

/* What fp's last wake of f carried (fb_wake_with; 0 for fb_wake), in fp.sent. */
static uint16_t *sent_to(fiber *f)
{
    for (int i = 0; i < TOTAL; i++) {
        if (!fp.sent[i].f) fp.sent[i].f = f;
        if (fp.sent[i].f == f) return &fp.sent[i].with;
    }
    ASSERT_TRUE(!"more fibers than fp.sent holds");
    return NULL;
}

static int fake_poll(void *state, int64_t timeout_ns)
{
    struct fake_poller *p = state;
    int runnable = p->alive - p->nparked;
    fb_stats st = stats_of(fb_current_runtime());
    ASSERT_PTR_EQ(fb_self(), NULL); /* called from the scheduler context */
    if (timeout_ns == 0) {
        ASSERT_GT(runnable, 0);
        ASSERT_LE(st.hops - p->last_hops, TOTAL); /* at least one poll per pass */
        p->nonblocking++;
    } else {
        ASSERT_EQ(timeout_ns, -1);
        ASSERT_EQ(runnable, 0);
        p->blocking++;
    }
    p->last_hops = st.hops;
    if (p->nparked == 0) return 0;
    fiber *f = p->parked[0];
    memmove(p->parked, p->parked + 1, (size_t)--p->nparked * sizeof p->parked[0]);
    ASSERT_PTR_EQ(*fb_wait_slot(f), &fp);
    *fb_wait_slot(f) = NULL;
    /* Every third wake is a plain fb_wake, which must leave 0 whatever the last one left. */
    uint16_t with = ++p->wakes % 3 ? (uint16_t)(p->wakes * 7919u) : 0;
    if (with)
        fb_wake_with(f, with);
    else
        fb_wake(f);
    *sent_to(f) = with;
    return 1;
}

static size_t fake_pending(void *state)
{
    return (size_t)((struct fake_poller *)state)->nparked;
}

static void park_on_fake_poller(void)
{
    *fb_wait_slot(fb_self()) = &fp;
    fp.parked[fp.nparked++] = fb_self();
    fb_park();
    ASSERT_PTR_EQ(*fb_wait_slot(fb_self()), NULL);
    ASSERT_EQ(fb_woken_with(fb_self()), *sent_to(fb_self()));
}

static void worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < WORK_ROUNDS; i++)
        park_on_fake_poller();
    fp.workers_done++;
    fp.workers_done_while_busy += fp.busy_done < BUSY;
    fp.alive--;
}

static void late_worker(void *arg)
{
    (void)arg;
    while (fp.busy_done < BUSY)
        fb_yield();
    for (int i = 0; i < WORK_ROUNDS; i++)
        park_on_fake_poller();
    fp.alive--;
}

static void busy(void *arg)
{
    (void)arg;
    for (int i = 0; i < BUSY_YIELDS; i++)
        fb_yield();
    fp.busy_done++;
    fp.alive--;
}

void test_poller(void)
{
    config.poller = (fb_poller){.state = &fp, .poll = fake_poll, .pending = fake_pending};
    fb_runtime *rt = new_runtime();
    for (int i = 0; i < WORKERS; i++)
        ASSERT_TRUE(fb_spawn(rt, worker, NULL));
    /* Wake-ups the busy fibers cannot see must still arrive while they run. */
    for (int i = 0; i < BUSY; i++)
        ASSERT_TRUE(fb_spawn(rt, busy, NULL));
    ASSERT_TRUE(fb_spawn(rt, late_worker, NULL));
    fp.alive = TOTAL;
    ASSERT_EQ(fb_run(rt), 0);
    fb_stats st = stats_of(rt);
    printf("polls: %ld non-blocking, %ld blocking; %d workers finished while busy fibers ran\n",
           fp.nonblocking, fp.blocking, fp.workers_done_while_busy);
    ASSERT_EQ(fp.workers_done, WORKERS);
    ASSERT_EQ(fp.workers_done_while_busy, WORKERS);
    ASSERT_GT(fp.nonblocking, 0);
    ASSERT_LE(WORK_ROUNDS, fp.blocking); /* the late worker alone: every wake-up blocked */
    ASSERT_EQ(st.polls, fp.nonblocking + fp.blocking);
    ASSERT_EQ(st.live, 0);
    fb_runtime_free(rt);
}

/* A worker left parked with no poller to wake it: fb_run reports the deadlock. */
void test_deadlock(void)
{
    fb_runtime *rt = new_runtime();
    ASSERT_TRUE(fb_spawn(rt, worker, NULL));
    fp.alive = 1;
    errno = 0;
    ASSERT_EQ(fb_run(rt), -1);
    ASSERT_EQ(errno, EDEADLK);
    ASSERT_EQ(stats_of(rt).live, 1);
    fb_runtime_free(rt); /* discards the parked fiber and its stack */
}

/* Bad configurations are refused; one runtime per thread. */
void test_config(void)
{
    fb_policy p;
    fb_stack_mode m;
    unsigned k = 99;
    ASSERT_EQ(fb_stack_mode_parse("guarded", &m, &k), 0);
    ASSERT_TRUE(m == FB_STACK_GUARDED && k == 0);
    ASSERT_EQ(fb_stack_mode_parse("copy", &m, &k), 0);
    ASSERT_TRUE(m == FB_STACK_COPY && k == 1);
    ASSERT_EQ(fb_stack_mode_parse("copy:16", &m, &k), 0);
    ASSERT_TRUE(m == FB_STACK_COPY && k == 16);
    const char *bad_modes[] = {"copy:",     "copy:0", "copy:x",    "copy:2x", "copy:-1",
                               "copy:1025", "copies", "guarded:2", "",        NULL};
    for (int i = 0; bad_modes[i]; i++)
        ASSERT_EQ(fb_stack_mode_parse(bad_modes[i], &m, &k), -1);
    ASSERT_EQ(fb_policy_parse("circle", &p), -1);
    ASSERT_EQ(fb_policy_parse("ring", &p), 0);
    ASSERT_EQ(p, FB_RING);
    fb_config bad = config;
    bad.stack_size = 1024;
    ASSERT_TRUE(fb_runtime_new(&bad) == NULL && errno == EINVAL);
    bad = config;
    bad.backend = NULL;
    ASSERT_TRUE(fb_runtime_new(&bad) == NULL && errno == EINVAL);
    bad = config;
    bad.stack_mode = FB_STACK_GUARDED;
    bad.shared_stacks = 2; /* shared stacks without copy mode */
    ASSERT_TRUE(fb_runtime_new(&bad) == NULL && errno == EINVAL);
    fb_runtime *rt = new_runtime();
    ASSERT_TRUE(fb_runtime_new(&config) == NULL && errno == EBUSY);
    ASSERT_PTR_EQ(fb_current_runtime(), rt);
    ASSERT_TRUE(fb_spawn(rt, nested_run, rt));
    ASSERT_EQ(fb_run(rt), 0);
    ASSERT_EQ(stats_of(rt).finished, 1);
    fb_runtime_free(rt);
    ASSERT_PTR_EQ(fb_current_runtime(), NULL);
}

#define TEST_SCHED__ENTRY(name, ...) {#name, test_##name, #__VA_ARGS__},
static const test_case cases[] = {TEST_SCHED_CASES(TEST_SCHED__ENTRY)};
#undef TEST_SCHED__ENTRY

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        TEST_CASE_LIST(cases);
        return 0;
    }
    if ((argc != 4 && argc != 5) || fb_policy_parse(argv[2], &config.policy) != 0 ||
        (argc == 5 &&
         fb_stack_mode_parse(argv[4], &config.stack_mode, &config.shared_stacks) != 0)) {
        fprintf(
            stderr,
            "usage: test-sched CASE star|ring BACKEND [guarded|copy[:K]] | test-sched --list\n");
        return 2;
    }
    config.backend = sw_backend_find(argv[3]);
    if (!config.backend) {
        printf("not run: backend '%s' is not compiled in (have: %s)\n", argv[3],
               sw_backend_names());
        return 77;
    }
    copy_mode = config.stack_mode == FB_STACK_COPY;
    shared_k = config.shared_stacks;
    if (copy_mode && !config.backend->props.copy_stack) {
        /* What the backend declares decides: such a runtime must be refused, with ENOTSUP. */
        errno = 0;
        ASSERT_TRUE(fb_runtime_new(&config) == NULL);
        ASSERT_EQ(errno, ENOTSUP);
        printf("ok: %s/%s/%s/%s: refused (ENOTSUP), as the backend declares no copy stacks\n",
               argv[1], argv[2], argv[3], argv[4]);
        return 0;
    }
    TEST_CASE_REQUIRE("test-sched", cases, argv[1])();
    printf("ok: %s/%s/%s/%s\n", argv[1], argv[2], argv[3], fb_stack_mode_name(config.stack_mode));
    return 0;
}
