/* test-sched-stacks.c - the fiber scheduler's tests of its stacks: the copy-stack aliasing
 * hazard, live parts and records that survive evictions, records on small pages, claim-ahead,
 * and a stack overflow's report. */
#include "test-sched.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- alias: the copy-stack hazard of seed 004, shown to happen (copy) and not (guarded) --- */

/*
 * Two fibers run the same function, so their locals sit at the same offset from their stack
 * tops. The first publishes the address of its local `id` (= 1) and yields; the second sets
 * its own `id` (= 2) and reads through the published pointer. With a stack of its own per
 * fiber (guarded) it reads 1, the first fiber's value. On a shared stack the second fiber's
 * `id` is at the very same address, so it reads its own 2: the first fiber's pointer now
 * aliases another fiber's data. Back in the first fiber, its frames restored, the pointer
 * reads 1 again. Fillers make the two land on the same one of K shared stacks.
 */
static volatile int *published;
static int alias_read_by_second, alias_read_by_first;
static bool alias_same_address;

static void __attribute__((noinline)) alias_fiber(void *arg)
{
    volatile int id = (int)(long)arg;
    if (id == 1) {
        published = &id;
        fb_yield();
        alias_read_by_first = *published;
        ASSERT_EQ(id, 1);
    } else {
        alias_same_address = published == &id;
        alias_read_by_second = *published;
        fb_yield();
        ASSERT_EQ(id, 2);
    }
}

static void filler(void *arg)
{
    (void)arg;
}

void test_alias(void)
{
    fb_runtime *rt = new_runtime();
    ASSERT_TRUE(fb_spawn(rt, alias_fiber, (void *)1L));
    for (unsigned i = 1; copy_mode && i < shared_k; i++)
        ASSERT_TRUE(fb_spawn(rt, filler, NULL));
    ASSERT_TRUE(fb_spawn(rt, alias_fiber, (void *)2L));
    ASSERT_EQ(fb_run(rt), 0);
    printf("%s: the second fiber read %d through the first fiber's pointer (same address: %s); "
           "the first read %d\n",
           fb_stack_mode_name(config.stack_mode), alias_read_by_second,
           alias_same_address ? "yes" : "no", alias_read_by_first);
    ASSERT_EQ(alias_read_by_second, copy_mode ? 2 : 1);
    ASSERT_EQ(alias_same_address, copy_mode);
    ASSERT_EQ(alias_read_by_first, 1);
    fb_runtime_free(rt);
}

/* ---- deep: live parts of changing size survive every eviction --------------------------- */

/*
 * DEEP_FIBERS fibers recurse to a depth that changes every round (1..DEEP_MAX frames of about
 * 300 bytes, so live parts range from a few hundred bytes to ~15 KiB and save buffers must
 * grow), yield twice at the bottom, and check every frame's pattern on the way back up.
 */
enum { DEEP_FIBERS = 7, DEEP_ROUNDS = 25, DEEP_MAX = 48, DEEP_WORDS = 32 };
static long deep_corrupt, deep_bottoms;

static void __attribute__((noinline)) deep_dig(long id, int depth, int target)
{
    volatile uint64_t frame[DEEP_WORDS];
    for (int i = 0; i < DEEP_WORDS; i++)
        frame[i] = (uint64_t)id << 40 ^ (uint64_t)depth << 20 ^ (uint64_t)i;
    if (depth < target) {
        deep_dig(id, depth + 1, target);
    } else {
        deep_bottoms++;
        fb_yield();
        fb_yield();
    }
    for (int i = 0; i < DEEP_WORDS; i++)
        deep_corrupt += frame[i] != ((uint64_t)id << 40 ^ (uint64_t)depth << 20 ^ (uint64_t)i);
}

static void deep_fiber(void *arg)
{
    long id = (long)arg;
    for (int r = 0; r < DEEP_ROUNDS; r++)
        deep_dig(id, 1, (int)((id * 7 + r * 13) % DEEP_MAX) + 1);
}

void test_deep(void)
{
    fb_runtime *rt = new_runtime();
    for (long i = 0; i < DEEP_FIBERS; i++)
        ASSERT_TRUE(fb_spawn(rt, deep_fiber, (void *)i));
    ASSERT_EQ(fb_run(rt), 0);
    fb_stats st = stats_of(rt);
    printf("%ld frames checked after %llu saves of %llu bytes in all\n", deep_bottoms,
           (unsigned long long)st.stack_saves, (unsigned long long)st.bytes_saved);
    ASSERT_EQ(deep_bottoms, DEEP_FIBERS * DEEP_ROUNDS);
    ASSERT_EQ(deep_corrupt, 0);
    if (copy_mode) {
        ASSERT_LE(DEEP_FIBERS * DEEP_ROUNDS, st.stack_saves);
        ASSERT_LE(st.stack_saves * 1024, st.bytes_saved); /* deep parts were really moved */
        ASSERT_EQ(st.save_bytes, 0);
    }
    fb_runtime_free(rt);
}

/* ---- records: many fibers' records and saved live parts stay their own ------------------ */

/*
 * More fibers than the first slabs of records hold (copy mode: past the first huge slab),
 * each with a pattern of its own in its wait area and in a local array of 0 to 480 bytes, so
 * that live parts fall on either side of what a record holds inline (256 bytes). Every fiber checks
 * both after each yield: a record placed over another, a wait area off its 16-byte alignment,
 * or a live part restored from the wrong place shows as a bad byte.
 */
enum { RECORDS_COPY = 3200, RECORDS_GUARDED = 600, RECORDS_YIELDS = 3 };
static long records_bad, records_checked;

static unsigned char record_byte(long id, size_t i)
{
    return (unsigned char)(id * 131 + (long)i * 7 + 1);
}

static void record_fiber(void *arg)
{
    long id = (long)arg;
    unsigned char *area = fb_wait_area(fb_self());
    records_bad += ((uintptr_t)area & 15) != 0;
    size_t len = (size_t)(id % 5) * 120;
    volatile unsigned char *local = __builtin_alloca(len + 1);
    for (size_t i = 0; i < FB_WAIT_AREA; i++)
        area[i] = record_byte(id, i);
    for (size_t i = 0; i <= len; i++)
        local[i] = record_byte(~id, i);
    for (int y = 0; y < RECORDS_YIELDS; y++) {
        fb_yield();
        for (size_t i = 0; i < FB_WAIT_AREA; i++)
            records_bad += area[i] != record_byte(id, i);
        for (size_t i = 0; i <= len; i++)
            records_bad += local[i] != record_byte(~id, i);
        records_checked++;
    }
}

void test_records(void)
{
    long n = copy_mode ? RECORDS_COPY : RECORDS_GUARDED;
    fb_runtime *rt = new_runtime();
    for (long i = 0; i < n; i++)
        ASSERT_TRUE(fb_spawn(rt, record_fiber, (void *)i));
    ASSERT_EQ(fb_run(rt), 0);
    fb_stats st = stats_of(rt);
    printf("%ld fibers, %ld checks, %ld bad bytes; %llu bytes saved in %llu saves\n", n,
           records_checked, records_bad, (unsigned long long)st.bytes_saved,
           (unsigned long long)st.stack_saves);
    ASSERT_EQ(records_bad, 0);
    ASSERT_EQ(records_checked, n * RECORDS_YIELDS);
    ASSERT_EQ(st.save_bytes, 0);
    if (copy_mode) ASSERT_LE(n * RECORDS_YIELDS, st.stack_saves);
    fb_runtime_free(rt);
}

/* ---- nohuge: records on 4 KiB pages work alike -------------------------------------------- */

/*
 * The records case with copy mode's 2 MiB slabs advised MADV_NOHUGEPAGE, as they are when THP is
 * `never` or its huge pages were split: every byte still comes back, the records add no mapping
 * that asks for huge pages (smaps' VmFlags `hg`: counted before and after, since under qemu-user
 * smaps shows the emulator's own mappings too, some advised huge), while the records' slabs of
 * copy mode, where the kernel has transparent huge pages at all, add mappings that say `nh`.
 */
static void smaps_flags(int *hg, int *nh)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    ASSERT_TRUE(f);
    char line[512];
    *hg = *nh = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmFlags:", 8) != 0) continue;
        *hg += strstr(line, " hg") != NULL;
        *nh += strstr(line, " nh") != NULL;
    }
    fclose(f);
}

void test_nohuge(void)
{
    fb__no_huge_records(true);
    long n = copy_mode ? RECORDS_COPY : RECORDS_GUARDED;
    fb_runtime *rt = new_runtime();
    int hg, nh, hg_before, nh_before;
    smaps_flags(&hg_before, &nh_before); /* before the records: the stacks, and any emulator */
    for (long i = 0; i < n; i++)
        ASSERT_TRUE(fb_spawn(rt, record_fiber, (void *)i));
    smaps_flags(&hg, &nh);
    bool thp = access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
    printf("%ld fibers; mappings advised huge: %d (%d before the records), advised not huge: %d "
           "(%d before) (THP %s)\n",
           n, hg, hg_before, nh, nh_before, thp ? "in the kernel" : "absent");
    /* Under qemu-user (the cross build's tests) smaps is the emulator's: the guest's advice
     * does not show there, so only the records' bytes are checked. */
    if (getenv("SWITCHYARD_EMULATED")) {
        printf("smaps not checked: run under an emulator\n");
    } else {
        ASSERT_EQ(hg, hg_before);
        if (copy_mode && thp) ASSERT_LT(nh_before, nh);
    }
    ASSERT_EQ(fb_run(rt), 0);
    ASSERT_EQ(records_bad, 0);
    ASSERT_EQ(records_checked, n * RECORDS_YIELDS);
    fb_runtime_free(rt);
}

/* ---- ahead: copy mode learns the order in which fibers claim their stacks --------------- */

/*
 * Fibers taking turns in a fixed order: from the second pass on, the fiber each one expects
 * FB__CLAIM_AHEAD claims after its own (whose record copy mode fetches early) is the one that
 * many turns later, across the end of a pass too. Guarded stacks are never claimed: no
 * expectation at all.
 */
enum { AHEAD_FIBERS = 2 * FB__CLAIM_AHEAD + 5, AHEAD_YIELDS = 3 };
static fiber *ahead_fibers[AHEAD_FIBERS];
static long ahead_bad, ahead_checked;

static void ahead_fiber(void *arg)
{
    long id = (long)arg;
    ahead_fibers[id] = fb_self();
    for (int y = 0; y < AHEAD_YIELDS; y++) {
        fb_yield();
        if (y == 0) continue; /* the first pass is still being learned */
        fiber *want = copy_mode ? ahead_fibers[(id + FB__CLAIM_AHEAD) % AHEAD_FIBERS] : NULL;
        fiber *got = fb__claim_ahead(fb_self());
        if (got != want)
            printf("fiber %ld, pass %d: expects %p, not %p\n", id, y + 1, (void *)got,
                   (void *)want);
        ahead_bad += got != want;
        ahead_checked++;
    }
}

void test_ahead(void)
{
    fb_runtime *rt = new_runtime();
    for (long i = 0; i < AHEAD_FIBERS; i++)
        ASSERT_TRUE(fb_spawn(rt, ahead_fiber, (void *)i));
    ASSERT_EQ(fb_run(rt), 0);
    printf("%d fibers, %ld checks, %ld wrong\n", AHEAD_FIBERS, ahead_checked, ahead_bad);
    ASSERT_EQ(ahead_checked, AHEAD_FIBERS * (AHEAD_YIELDS - 1));
    ASSERT_EQ(ahead_bad, 0);
    fb_runtime_free(rt);
}

/* ---- overflow: a fiber running off its stack is reported in one line, in both modes ------ */

static volatile bool keep_digging = true; /* never cleared: the recursion only ends by fault */

static void __attribute__((noinline)) runaway(int depth)
{
    volatile char pad[512];
    pad[0] = (char)depth;
    if (keep_digging) runaway(depth + 1);
    deep_corrupt += pad[0]; /* after the call: no tail call */
}

static void runaway_fiber(void *arg)
{
    (void)arg;
    fb_yield(); /* in copy mode: be evicted and restored once first */
    runaway(0);
}

void test_overflow(void)
{
    int err[2];
    ASSERT_EQ(pipe(err), 0);
    fflush(stdout);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        dup2(err[1], 2);
        alarm(20);
        fb_runtime *rt = new_runtime();
        ASSERT_TRUE(fb_spawn(rt, runaway_fiber, NULL));
        ASSERT_TRUE(fb_spawn(rt, filler, NULL));
        fb_run(rt);
        _exit(0); /* not reached: the overflow aborts */
    }
    close(err[1]);
    char text[1024] = "";
    size_t got = 0;
    ssize_t n;
    while (got < sizeof text - 1 && (n = read(err[0], text + got, sizeof text - 1 - got)) > 0)
        got += (size_t)n;
    close(err[0]);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    printf("child: %s", text);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    /* One line, the last thing the program wrote (ASan may warn about swapcontext before it;
     * under qemu-user the emulator itself reports the fatal signal after it, on the same
     * stderr, in a line of its own). */
    const char *msg = strstr(text, "fiber stack overflow: fault at ");
    ASSERT_TRUE(msg != NULL);
    const char *end = strchr(msg, '\n');
    ASSERT_TRUE(end != NULL);
    ASSERT_TRUE(end[1] == '\0' || strncmp(end + 1, "qemu: uncaught target signal ", 29) == 0);
}
