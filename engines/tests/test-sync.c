/* test-sync.c - fiber mutex, condition variable, semaphore and event lock; the seed-000 deadlock.
 */
#define _GNU_SOURCE
#include "asserts.h"
#include "test-sync-cases.h"
#include "io.h"
#include "sync.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: test-sync CASE star|ring. One CTest process per case and policy
 * (engines/sync/<case>/<sched>); the cross-thread cases run ring. Every wait is bounded: the
 * deadlock cases watch their scheduler threads from the main thread with a deadline and
 * report what they found instead of hanging.
 */

#define MS ((int64_t)1000000)

static fb_policy policy;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const sw_backend *backend(void)
{
    const sw_backend *b = sw_backend_find("asm");
    return b ? b : sw_backend_find("ucontext");
}

/* A runtime with fiber IO on the calling thread. */
struct rt_io {
    fb_io *io;
    fb_runtime *rt;
};

static struct rt_io start(void)
{
    struct rt_io r;
    r.io = fb_io_new("merged");
    ASSERT_TRUE(r.io != NULL);
    fb_config cfg = {.backend = backend(), .policy = policy, .poller = fb_io_poller(r.io)};
    r.rt = fb_runtime_new(&cfg);
    ASSERT_TRUE(r.rt != NULL);
    return r;
}

static void finish(struct rt_io *r)
{
    fb_runtime_free(r->rt);
    fb_io_free(r->io);
}

/* ---- mutex: FIFO hand-off ----------------------------------------------------------------- */

static fb_mutex mtx;
static int order[16], norder;

static void holder_main(void *arg)
{
    (void)arg;
    ASSERT_EQ(fb_mutex_lock(&mtx), 0);
    fb_yield(); /* the others queue now, in spawn order */
    fb_yield();
    ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
    /* Hand-off: the longest waiter owns it already; locking again queues behind them all. */
    ASSERT_EQ(fb_mutex_trylock(&mtx), EBUSY);
    ASSERT_EQ(fb_mutex_lock(&mtx), 0);
    order[norder++] = 0;
    ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
}

static void waiter_main(void *arg)
{
    ASSERT_EQ(fb_mutex_lock(&mtx), 0);
    order[norder++] = (int)(intptr_t)arg;
    fb_yield(); /* hold it across a switch: the rest stay queued */
    ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
}

static void t_mutex_fifo(void)
{
    struct rt_io r = start();
    fb_mutex_init(&mtx);
    fb_spawn(r.rt, holder_main, NULL);
    for (intptr_t i = 1; i <= 5; i++)
        fb_spawn(r.rt, waiter_main, (void *)i);
    ASSERT_EQ(fb_run(r.rt), 0);
    ASSERT_EQ(norder, 6);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(order[i], i + 1);
    ASSERT_EQ(order[5], 0);
    ASSERT_EQ(fb_mutex_destroy(&mtx), 0);
    finish(&r);
}

/* ---- mutex: misuse is refused, never undefined -------------------------------------------- */

static void other_thread_lock(void *arg)
{
    (void)arg;
    ASSERT_EQ(fb_mutex_lock(&mtx), EPERM); /* the mutex belongs to the main thread's runtime */
}

static void *other_thread(void *arg)
{
    (void)arg;
    struct rt_io r = start();
    fb_spawn(r.rt, other_thread_lock, NULL);
    ASSERT_EQ(fb_run(r.rt), 0);
    finish(&r);
    return NULL;
}

static void errors_main(void *arg)
{
    (void)arg;
    ASSERT_EQ(fb_mutex_unlock(&mtx), EPERM);
    ASSERT_EQ(fb_mutex_lock(&mtx), 0);
    ASSERT_EQ(fb_mutex_lock(&mtx), EDEADLK);
    ASSERT_EQ(fb_mutex_destroy(&mtx), EBUSY);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, other_thread, NULL), 0);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
    ASSERT_EQ(fb_mutex_destroy(&mtx), 0);
    fb_sem s;
    fb_sem_init(&s, 0);
    ASSERT_EQ(fb_sem_trywait(&s), EAGAIN);
    fb_sem_post(&s);
    ASSERT_EQ(fb_sem_trywait(&s), 0);
}

static void t_mutex_errors(void)
{
    struct rt_io r = start();
    fb_mutex_init(&mtx);
    ASSERT_EQ(fb_mutex_lock(&mtx), EPERM); /* outside a fiber */
    fb_spawn(r.rt, errors_main, NULL);
    ASSERT_EQ(fb_run(r.rt), 0);
    finish(&r);
}

/* ---- condition variable: producer and consumers, no lost wake-up -------------------------- */

#define ITEMS 2000
static fb_cond cv;
static int queue_len, produced, consumed[4], wake_order[4], nwake;

static void consumer_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (;;) {
        ASSERT_EQ(fb_mutex_lock(&mtx), 0);
        while (queue_len == 0 && produced < ITEMS)
            ASSERT_EQ(fb_cond_wait(&cv, &mtx), 0);
        if (queue_len == 0) {
            ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
            return;
        }
        queue_len--;
        consumed[id]++;
        ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
        if (consumed[id] % 7 == 0) fb_yield();
    }
}

static void producer_main(void *arg)
{
    (void)arg;
    for (int i = 0; i < ITEMS; i++) {
        ASSERT_EQ(fb_mutex_lock(&mtx), 0);
        queue_len++;
        produced++;
        fb_cond_signal(&cv); /* one item, one wake-up: a lost one would strand an item */
        ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
        if (i % 3 == 0) fb_yield();
    }
    ASSERT_EQ(fb_mutex_lock(&mtx), 0);
    fb_cond_broadcast(&cv); /* done: everyone may leave */
    ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
}

static void fifo_waiter(void *arg)
{
    ASSERT_EQ(fb_mutex_lock(&mtx), 0);
    ASSERT_EQ(fb_cond_wait(&cv, &mtx), 0);
    wake_order[nwake++] = (int)(intptr_t)arg;
    ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
}

static void fifo_signaller(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ(fb_mutex_lock(&mtx), 0);
        fb_cond_signal(&cv);
        ASSERT_EQ(fb_mutex_unlock(&mtx), 0);
        fb_yield();
    }
}

static void t_cond_wakeup(void)
{
    struct rt_io r = start();
    fb_mutex_init(&mtx);
    fb_cond_init(&cv);
    for (intptr_t i = 0; i < 4; i++)
        fb_spawn(r.rt, consumer_main, (void *)i);
    fb_spawn(r.rt, producer_main, NULL);
    ASSERT_EQ(fb_run(r.rt), 0);
    ASSERT_EQ(queue_len, 0);
    ASSERT_EQ(consumed[0] + consumed[1] + consumed[2] + consumed[3], ITEMS);
    for (int i = 0; i < 4; i++)
        ASSERT_GE(consumed[i], 1); /* FIFO wake-ups spread the work */
    /* Signals wake waiters in the order they started waiting. */
    for (intptr_t i = 0; i < 4; i++)
        fb_spawn(r.rt, fifo_waiter, (void *)i);
    fb_spawn(r.rt, fifo_signaller, NULL);
    ASSERT_EQ(fb_run(r.rt), 0);
    ASSERT_EQ(nwake, 4);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(wake_order[i], i);
    ASSERT_EQ(fb_cond_destroy(&cv), 0);
    finish(&r);
}

/* ---- semaphore: at most K fibers reach the back end --------------------------------------- */

static fb_sem sem;
static int inside, max_inside, served, sem_order[20], nsem;

static void backend_user(void *arg)
{
    ASSERT_EQ(fb_sem_wait(&sem), 0);
    sem_order[nsem++] = (int)(intptr_t)arg;
    inside++;
    if (inside > max_inside) max_inside = inside;
    fb_sleep(2 * MS); /* the back end's latency: the other fibers run meanwhile */
    inside--;
    served++;
    fb_sem_post(&sem);
}

static void t_sem_cap(void)
{
    struct rt_io r = start();
    fb_sem_init(&sem, 3);
    for (intptr_t i = 0; i < 20; i++)
        fb_spawn(r.rt, backend_user, (void *)i);
    int64_t t0 = now_ns();
    ASSERT_EQ(fb_run(r.rt), 0);
    ASSERT_EQ(served, 20);
    ASSERT_EQ(max_inside, 3);
    for (int i = 0; i < 20; i++)
        ASSERT_EQ(sem_order[i], i);       /* posts hand the unit to the longest waiter */
    ASSERT_GE(now_ns() - t0, 7 * 2 * MS); /* ceil(20 / 3) rounds of 2 ms, not 20 */
    ASSERT_EQ(fb_sem_value(&sem), 3);
    ASSERT_EQ(fb_sem_destroy(&sem), 0);
    finish(&r);
}

/* ---- runtime shutdown with waiters that nobody can wake ----------------------------------- */

static void lock_and_finish(void *arg)
{
    (void)arg;
    ASSERT_EQ(fb_mutex_lock(&mtx), 0); /* finishes holding it: a bug in the program */
}

static void stranded_lock(void *arg)
{
    (void)arg;
    fb_mutex_lock(&mtx);
    ASSERT_TRUE(0); /* never resumed */
}

static void stranded_sem(void *arg)
{
    (void)arg;
    fb_sem_wait(&sem);
    ASSERT_TRUE(0);
}

static void stranded_cond(void *arg)
{
    static fb_mutex m2 = FB_MUTEX_INIT;
    (void)arg;
    fb_mutex_lock(&m2);
    fb_cond_wait(&cv, &m2);
    ASSERT_TRUE(0);
}

static void t_shutdown(void)
{
    struct rt_io r = start();
    fb_mutex_init(&mtx);
    fb_sem_init(&sem, 0);
    fb_cond_init(&cv);
    fb_spawn(r.rt, lock_and_finish, NULL);
    fb_spawn(r.rt, stranded_lock, NULL);
    fb_spawn(r.rt, stranded_sem, NULL);
    fb_spawn(r.rt, stranded_cond, NULL);
    int64_t t0 = now_ns();
    errno = 0;
    ASSERT_EQ(fb_run(r.rt), -1); /* reported at once, not hung */
    ASSERT_EQ(errno, EDEADLK);
    ASSERT_LE(now_ns() - t0, 5000 * MS);
    fb_stats st;
    fb_get_stats(r.rt, &st);
    ASSERT_EQ(st.live, 3);
    /* The objects still list the discarded waiters: destroy says so. */
    ASSERT_EQ(fb_mutex_destroy(&mtx), EBUSY);
    ASSERT_EQ(fb_sem_destroy(&sem), EBUSY);
    ASSERT_EQ(fb_cond_destroy(&cv), EBUSY);
    finish(&r); /* discards the three parked fibers without resuming them */
}

/* ---- event lock across threads ------------------------------------------------------------- */

#define EV_THREADS 3 /* two scheduler threads of four fibers each, and one plain thread */
#define EV_FIBERS  4
#define EV_ROUNDS  1500

static fb_event ev = FB_EVENT_INIT;
static long shared_counter; /* protected by ev only: a lost exclusion loses increments */
static atomic_int in_section;

static void section(int i)
{
    ASSERT_EQ(atomic_fetch_add(&in_section, 1), 0);
    long v = shared_counter;
    for (volatile int k = 0; k < 2000; k++)
        ; /* a little work with the lock held, so that the threads really overlap */
    if (i % 2 == 0 && fb_self()) fb_yield(); /* held across a switch: others must queue */
    shared_counter = v + 1;
    atomic_fetch_sub(&in_section, 1);
}

static void ev_fiber(void *arg)
{
    (void)arg;
    for (int i = 0; i < EV_ROUNDS; i++) {
        ASSERT_EQ(fb_event_lock(&ev), 0);
        section(i);
        ASSERT_EQ(fb_event_unlock(&ev), 0);
    }
}

static void *ev_sched_thread(void *arg)
{
    (void)arg;
    struct rt_io r = start();
    for (int i = 0; i < EV_FIBERS; i++)
        fb_spawn(r.rt, ev_fiber, NULL);
    ASSERT_EQ(fb_run(r.rt), 0);
    finish(&r);
    return NULL;
}

static void *ev_plain_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < EV_ROUNDS; i++) {
        ASSERT_EQ(fb_event_lock(&ev), 0);
        section(i);
        ASSERT_EQ(fb_event_unlock(&ev), 0);
    }
    return NULL;
}

/* A lost wake-up leaves a waiter parked forever: the watchdog turns that into a failure
 * with a message, rather than a CTest timeout. */
static void on_alarm(int sig)
{
    static const char msg[] = "test-sync: watchdog: a waiter never woke (lost wake-up)\n";
    (void)sig;
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

static int load(atomic_int *a) /* keeps the assertion messages readable */
{
    return atomic_load(a);
}

static void watchdog(unsigned seconds)
{
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

static void t_event_exclusion(void)
{
    pthread_t th[EV_THREADS];
    watchdog(20);
    int64_t t0 = now_ns();
    for (int i = 0; i < EV_THREADS; i++)
        ASSERT_EQ(pthread_create(&th[i], NULL, i < 2 ? ev_sched_thread : ev_plain_thread, NULL), 0);
    for (int i = 0; i < EV_THREADS; i++)
        ASSERT_EQ(pthread_join(th[i], NULL), 0);
    ASSERT_EQ(shared_counter, (long)(2 * EV_FIBERS + 1) * EV_ROUNDS);
    ASSERT_EQ(fb_event_destroy(&ev), 0);
    long slow = (long)atomic_load(&ev.contended), woken = (long)atomic_load(&ev.wakeups);
    printf("event lock: %ld exclusive sections from 2 schedulers x %d fibers and 1 plain thread "
           "in %.1f ms; %ld lock calls queued, %ld eventfd wake-ups\n",
           shared_counter, EV_FIBERS, (double)(now_ns() - t0) / 1e6, slow, woken);
    /* The slow path (queue, eventfd, wake-up, compete again) ran many times over. */
    ASSERT_GE(slow, 1);
    ASSERT_GE(woken, 100);
}

/* A fiber waits with a time limit while a plain thread holds the lock; the other fibers of
 * its scheduler keep running meanwhile. */
static atomic_int ticks;
static pthread_barrier_t bar;

static void ticker(void *arg)
{
    int64_t until = *(int64_t *)arg;
    while (now_ns() < until) {
        fb_sleep(1 * MS);
        atomic_fetch_add(&ticks, 1);
    }
}

static void timed_locker(void *arg)
{
    (void)arg;
    int64_t t0 = now_ns();
    ASSERT_EQ(fb_event_lock_timeout(&ev, 60 * MS), ETIMEDOUT);
    int64_t waited = now_ns() - t0;
    ASSERT_GE(waited, 60 * MS);
    ASSERT_LE(waited, 60 * MS + 2000 * MS); /* loose: the CPUs are shared */
    ASSERT_GE(load(&ticks), 2);             /* the scheduler was not blocked */
    pthread_barrier_wait(&bar);             /* let the holder release, then it must succeed */
    ASSERT_EQ(fb_event_lock_timeout(&ev, 2000 * MS), 0);
    ASSERT_EQ(fb_event_unlock(&ev), 0);
}

static void *holder_thread(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&bar);
    fb_event_unlock(&ev);
    return NULL;
}

static void t_event_timeout(void)
{
    watchdog(20);
    ASSERT_EQ(fb_event_lock(&ev), 0); /* a plain thread (main) holds it */
    ASSERT_EQ(fb_event_trylock(&ev), EBUSY);
    ASSERT_EQ(fb_event_destroy(&ev), EBUSY);
    pthread_barrier_init(&bar, NULL, 2);
    pthread_t th;
    /* The unlock must come from the holder's side; any thread may unlock (as libfiber's). */
    ASSERT_EQ(pthread_create(&th, NULL, holder_thread, NULL), 0);
    struct rt_io r = start();
    int64_t until = now_ns() + 100 * MS;
    fb_spawn(r.rt, ticker, &until);
    fb_spawn(r.rt, timed_locker, NULL);
    ASSERT_EQ(fb_run(r.rt), 0);
    finish(&r);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    ASSERT_EQ(fb_event_unlock(&ev), EPERM); /* not locked any more */
    ASSERT_EQ(fb_event_destroy(&ev), 0);
}

/* ---- the deadlock of seed 000 ----------------------------------------------------------------
 *
 * Two scheduler threads A and B, two fibers each, two locks. A1 takes lock 1 and B2 takes
 * lock 2, and each keeps it across a fiber switch (a 40 ms fb_sleep). Meanwhile A2 wants lock
 * 2 and B1 wants lock 1. With a pthread mutex, A2's wait blocks thread A in the kernel, so A1
 * never runs again to release lock 1; B1 blocks thread B the same way: neither scheduler can
 * ever run again. With the event lock A2 and B1 park only themselves, A1 and B2 wake from
 * their sleeps, release, and everything finishes.
 */

enum { PHASE_START, PHASE_WAITING, PHASE_DONE };

struct dl_lock {
    pthread_mutex_t pm;
    fb_event ev;
};

static bool use_pthread;
static struct dl_lock locks[2] = {{PTHREAD_MUTEX_INITIALIZER, FB_EVENT_INIT},
                                  {PTHREAD_MUTEX_INITIALIZER, FB_EVENT_INIT}};
static atomic_int phase[2][2]; /* [thread][fiber] */
static atomic_int threads_done;
static pthread_barrier_t holders; /* both holders hold their lock before anyone wants one */

static void dl_lock(int i)
{
    if (use_pthread)
        pthread_mutex_lock(&locks[i].pm);
    else
        ASSERT_EQ(fb_event_lock(&locks[i].ev), 0);
}

static void dl_unlock(int i)
{
    if (use_pthread)
        pthread_mutex_unlock(&locks[i].pm);
    else
        ASSERT_EQ(fb_event_unlock(&locks[i].ev), 0);
}

struct dl_arg {
    int thread; /* 0 = A, 1 = B */
    int fiber;  /* 0 = holder (A1, B2), 1 = wanter (A2, B1) */
};

static void dl_fiber(void *p)
{
    struct dl_arg *a = p;
    int own = a->thread, other = 1 - a->thread; /* A holds lock 0 and wants 1; B mirrors */
    if (a->fiber == 0) {
        dl_lock(own);
        pthread_barrier_wait(&holders);
        fb_sleep(40 * MS); /* a fiber switch with the lock held */
        dl_unlock(own);
    } else {
        fb_sleep(10 * MS); /* after both holders hold */
        atomic_store(&phase[a->thread][1], PHASE_WAITING);
        dl_lock(other);
        dl_unlock(other);
    }
    atomic_store(&phase[a->thread][a->fiber], PHASE_DONE);
}

static void *dl_thread(void *p)
{
    int t = (int)(intptr_t)p;
    static struct dl_arg args[2][2];
    struct rt_io r = start();
    for (int f = 0; f < 2; f++) {
        args[t][f] = (struct dl_arg){t, f};
        fb_spawn(r.rt, dl_fiber, &args[t][f]);
    }
    ASSERT_EQ(fb_run(r.rt), 0);
    finish(&r);
    atomic_fetch_add(&threads_done, 1);
    return NULL;
}

/* Runs the scenario; returns true when both threads finished within the bound, counted from
 * the moment both wanters asked for their lock (a loaded machine may take a while to get
 * there; that is not what is being measured). */
static bool dl_run(int64_t bound_ns)
{
    pthread_t th[2];
    pthread_barrier_init(&holders, NULL, 2);
    for (intptr_t t = 0; t < 2; t++)
        ASSERT_EQ(pthread_create(&th[t], NULL, dl_thread, (void *)t), 0);
    int64_t t0 = now_ns();
    while ((load(&phase[0][1]) == PHASE_START || load(&phase[1][1]) == PHASE_START) &&
           now_ns() - t0 < 20000 * MS)
        usleep(1000);
    t0 = now_ns();
    while (atomic_load(&threads_done) < 2 && now_ns() - t0 < bound_ns)
        usleep(1000);
    bool done = atomic_load(&threads_done) == 2;
    static const char *names[2][2] = {{"A1", "A2"}, {"B2", "B1"}};
    static const char *states[] = {"not finished", "waiting for the other thread's lock", "done"};
    printf("%s after %.0f ms (bound %.0f ms):\n", done ? "finished" : "DEADLOCK detected",
           (double)(now_ns() - t0) / 1e6, (double)bound_ns / 1e6);
    for (int t = 0; t < 2; t++)
        for (int f = 0; f < 2; f++)
            printf("  fiber %s (thread %c): %s\n", names[t][f], "AB"[t],
                   states[atomic_load(&phase[t][f])]);
    if (done)
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
    return done;
}

static void t_deadlock_pthread_mutex(void)
{
    use_pthread = true;
    bool done = dl_run(1000 * MS);
    ASSERT_EQ(done, false); /* the deadlock the seed describes, reproduced */
    /* Both wanters reached their wait and neither holder ever finished: it is exactly the
     * cross-thread cycle, not a slow machine (the holders needed 40 ms). */
    ASSERT_EQ(load(&phase[0][1]), PHASE_WAITING);
    ASSERT_EQ(load(&phase[1][1]), PHASE_WAITING);
    ASSERT_EQ(load(&phase[0][0]), PHASE_START);
    ASSERT_EQ(load(&phase[1][0]), PHASE_START);
    printf("pthread mutex held across a fiber switch: both schedulers blocked for good; "
           "reported, and the process exits without joining them\n");
    fflush(stdout);
    _exit(0); /* the two threads can never be joined: leave with them still blocked */
}

static void t_deadlock_event_lock(void)
{
    use_pthread = false;
    ASSERT_EQ(dl_run(5000 * MS), true);
    for (int t = 0; t < 2; t++)
        for (int f = 0; f < 2; f++)
            ASSERT_EQ(load(&phase[t][f]), PHASE_DONE);
    ASSERT_EQ(fb_event_destroy(&locks[0].ev), 0);
    ASSERT_EQ(fb_event_destroy(&locks[1].ev), 0);
}

#define TEST_SYNC__ENTRY(name, ...) {#name, t_##name, #__VA_ARGS__},
static const test_case cases[] = {TEST_SYNC_CASES(TEST_SYNC__ENTRY)};
#undef TEST_SYNC__ENTRY

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        TEST_CASE_LIST(cases);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: test-sync CASE star|ring | test-sync --list\n");
        return 2;
    }
    if (fb_policy_parse(argv[2], &policy) < 0) {
        fprintf(stderr, "test-sync: unknown scheduler '%s' (valid: star, ring)\n", argv[2]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    TEST_CASE_REQUIRE("test-sync", cases, argv[1])();
    printf("ok %s/%s\n", argv[1], argv[2]);
    return 0;
}
