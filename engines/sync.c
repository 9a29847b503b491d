/* sync.c - fiber mutex, condition variable and semaphore (one runtime) and the cross-thread event
 * lock. */
#define _GNU_SOURCE
#include "sync.h"
#include "io.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* ---- the wait queue of one runtime --------------------------------------------------------- */

struct fb_waiter {
    fb_waiter *next;
    fiber *f;
    bool signaled;
};

/* The caller must be a fiber of the runtime the queue belongs to (claimed on first use). */
static int q_claim(fb_waitq *q)
{
    fb_runtime *rt = fb_current_runtime();
    if (!fb_self() || (q->rt && q->rt != rt)) return EPERM;
    q->rt = rt;
    return 0;
}

/*
 * Queue the calling fiber and park it until q_pop picks it. A wake-up from anyone else
 * (an fb_wake that was meant for another wait) is ignored: the fiber parks again. The queue
 * entry lives in the fiber's record (fb_wait_area), not on its stack: in copy-stack mode a
 * parked fiber's stack addresses hold another fiber's frames (fiber.h). The IO layer uses
 * the same area only while the fiber waits on IO, which it cannot do while queued here.
 */
_Static_assert(sizeof(fb_waiter) <= FB_WAIT_AREA, "a waiter fits in the fiber's wait area");

static void q_wait(fb_waitq *q)
{
    fiber *self = fb_self();
    fb_waiter *w = fb_wait_area(self);
    *w = (fb_waiter){.f = self};
    if (q->tail)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
    while (!w->signaled)
        fb_park();
}

/* Make the longest waiter runnable; returns its fiber, or NULL when nobody waits. */
static fiber *q_pop(fb_waitq *q)
{
    fb_waiter *w = q->head;
    if (!w) return NULL;
    q->head = w->next;
    if (!q->head) q->tail = NULL;
    w->signaled = true;
    fb_wake(w->f);
    return w->f;
}

/* ---- mutex --------------------------------------------------------------------------------- */

void fb_mutex_init(fb_mutex *m)
{
    *m = (fb_mutex)FB_MUTEX_INIT;
}

int fb_mutex_destroy(fb_mutex *m)
{
    return m->owner || m->q.head ? EBUSY : 0;
}

int fb_mutex_lock(fb_mutex *m)
{
    int rc = q_claim(&m->q);
    if (rc) return rc;
    fiber *self = fb_self();
    if (m->owner == self) return EDEADLK;
    if (!m->owner) {
        m->owner = self;
        return 0;
    }
    q_wait(&m->q); /* the unlocker made us the owner before waking us */
    return 0;
}

int fb_mutex_trylock(fb_mutex *m)
{
    int rc = q_claim(&m->q);
    if (rc) return rc;
    if (m->owner) return EBUSY;
    m->owner = fb_self();
    return 0;
}

int fb_mutex_unlock(fb_mutex *m)
{
    if (!fb_self() || m->owner != fb_self()) return EPERM;
    m->owner = q_pop(&m->q); /* hand-off: the longest waiter owns it now, or nobody */
    return 0;
}

/* ---- condition variable ------------------------------------------------------------------- */

void fb_cond_init(fb_cond *c)
{
    *c = (fb_cond)FB_COND_INIT;
}

int fb_cond_destroy(fb_cond *c)
{
    return c->q.head ? EBUSY : 0;
}

int fb_cond_wait(fb_cond *c, fb_mutex *m)
{
    int rc = q_claim(&c->q);
    if (rc) return rc;
    /* One thread and no preemption: nothing can signal between the unlock and the park, so
     * queueing after the unlock loses no wake-up; the unlock itself never switches. */
    if ((rc = fb_mutex_unlock(m)) != 0) return rc;
    q_wait(&c->q);
    return fb_mutex_lock(m);
}

void fb_cond_signal(fb_cond *c)
{
    q_pop(&c->q);
}

void fb_cond_broadcast(fb_cond *c)
{
    while (q_pop(&c->q))
        ;
}

/* ---- semaphore ----------------------------------------------------------------------------- */

void fb_sem_init(fb_sem *s, size_t value)
{
    *s = (fb_sem){.value = value};
}

int fb_sem_destroy(fb_sem *s)
{
    return s->q.head ? EBUSY : 0;
}

int fb_sem_wait(fb_sem *s)
{
    int rc = q_claim(&s->q);
    if (rc) return rc;
    if (s->value > 0) {
        s->value--;
        return 0;
    }
    q_wait(&s->q); /* fb_sem_post handed its unit to us */
    return 0;
}

int fb_sem_trywait(fb_sem *s)
{
    if (s->value == 0) return EAGAIN;
    s->value--;
    return 0;
}

void fb_sem_post(fb_sem *s)
{
    if (!q_pop(&s->q)) s->value++;
}

size_t fb_sem_value(const fb_sem *s)
{
    return s->value;
}

/* ---- event lock ---------------------------------------------------------------------------- */

/*
 * A waiter is allocated by the locking call (on the heap: see fb_event_lock_timeout). Its
 * state tells the waiter when the unlocker is done with it: QUEUED (in the list), POPPED
 * (taken off the list, the eventfd write may still be under way), SIGNALED (written; the
 * unlocker will not touch it again). The waiter never leaves before SIGNALED once popped, so
 * the unlocker never writes to a waiter or an eventfd that is gone.
 */
enum { W_QUEUED, W_POPPED, W_SIGNALED };

struct fb_event_waiter {
    fb_event_waiter *next;
    int efd;
    atomic_int state;
    int64_t since; /* when its lock call first queued */
    bool handed;   /* the unlocker took the word for it: it owns the lock when it wakes */
};

#define POOL_MAX 8

/* Clean eventfds (counter zero, nobody will write them) kept per thread for the next wait. */
static __thread struct {
    int fd[POOL_MAX];
    int n;
} pool;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void close_efd(int fd)
{
    if (fb_io_current())
        fb_close(fd); /* the thread's IO runtime may have it registered */
    else
        close(fd);
}

static void pool_drain(void *unused)
{
    (void)unused;
    while (pool.n > 0)
        close_efd(pool.fd[--pool.n]);
}

static void pool_key_make(void)
{
    pthread_key_create(&pool_key, pool_drain);
}

static int efd_get(void)
{
    if (pool.n > 0) return pool.fd[--pool.n];
    pthread_once(&pool_once, pool_key_make);
    pthread_setspecific(pool_key, &pool); /* any non-NULL value: runs pool_drain at exit */
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

static void efd_put(int fd)
{
    if (pool.n < POOL_MAX)
        pool.fd[pool.n++] = fd;
    else
        close_efd(fd);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin_lock(fb_event *e)
{
    while (atomic_flag_test_and_set_explicit(&e->guard, memory_order_acquire))
        sched_yield(); /* the holder was preempted inside a few instructions */
}

static void spin_unlock(fb_event *e)
{
    atomic_flag_clear_explicit(&e->guard, memory_order_release);
}

static bool try_take(fb_event *e)
{
    int expected = 0;
    return atomic_compare_exchange_strong(&e->locked, &expected, 1);
}

/* Off the list if still on it (true); false when an unlocker popped it first. */
static bool unqueue(fb_event *e, fb_event_waiter *w)
{
    bool found = false;
    spin_lock(e);
    for (fb_event_waiter **p = &e->head, *prev = NULL; *p; prev = *p, p = &(*p)->next) {
        if (*p != w) continue;
        *p = w->next;
        if (e->tail == w) e->tail = prev;
        atomic_fetch_sub(&e->waiters, 1);
        found = true;
        break;
    }
    spin_unlock(e);
    return found;
}

/*
 * Wake the longest waiter, if any: pop it under the guard, write its eventfd outside. The
 * woken waiter competes for the word again, as in libfiber, because handing the lock over on
 * every unlock turns contention between threads into a convoy (every lock then sleeps and
 * wakes through the kernel). Competing alone lets a holder that relocks at once starve the
 * waiter, so a waiter that has queued for more than STARVING_NS is handed the lock instead:
 * the word is taken on its behalf before it wakes (Go's sync.Mutex switches to hand-off the
 * same way after 1 ms).
 */
#define STARVING_NS 1000000

static void wake_one(fb_event *e)
{
    spin_lock(e);
    fb_event_waiter *w = e->head;
    if (w) {
        e->head = w->next;
        if (!e->head) e->tail = NULL;
        atomic_fetch_sub(&e->waiters, 1);
        w->handed = mono_ns() - w->since > STARVING_NS && try_take(e);
        atomic_store(&w->state, W_POPPED);
    }
    spin_unlock(e);
    if (!w) return;
    atomic_fetch_add_explicit(&e->wakeups, 1, memory_order_relaxed);
    uint64_t one = 1;
    while (write(w->efd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    atomic_store(&w->state, W_SIGNALED);
}

/* A popped waiter waits (briefly) for the unlocker to finish its write, then empties the
 * counter, so that the eventfd goes back to the pool clean. */
static void settle(fb_event_waiter *w)
{
    uint64_t v;
    while (atomic_load(&w->state) != W_SIGNALED)
        sched_yield();
    while (read(w->efd, &v, sizeof v) < 0 && errno == EINTR)
        ;
}

/* Wait until the waiter's eventfd turns readable: the fiber in its IO runtime, a plain
 * thread in poll. 0 when readable, ETIMEDOUT, or another error. */
static int wait_readable(int efd, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline < 0 ? FB_FOREVER : deadline - mono_ns();
        if (deadline >= 0 && left <= 0) return ETIMEDOUT;
        if (fb_self()) {
            if (fb_wait(efd, FB_IN, left) == 0) return 0;
            return errno;
        }
        struct pollfd p = {.fd = efd, .events = POLLIN};
        int ms = left < 0 ? -1 : (int)((left + 999999) / 1000000);
        int rc = poll(&p, 1, ms);
        if (rc > 0) return 0;
        if (rc < 0 && errno != EINTR) return errno;
    }
}

void fb_event_init(fb_event *e)
{
    atomic_init(&e->locked, 0);
    atomic_init(&e->waiters, 0);
    atomic_flag_clear(&e->guard);
    e->head = e->tail = NULL;
    atomic_init(&e->contended, 0);
    atomic_init(&e->wakeups, 0);
}

int fb_event_destroy(fb_event *e)
{
    return atomic_load(&e->locked) || atomic_load(&e->waiters) ? EBUSY : 0;
}

int fb_event_trylock(fb_event *e)
{
    return try_take(e) ? 0 : EBUSY;
}

/* The slow path: queue wp, wait for its eventfd, compete (or own it when handed over). */
static int lock_slow(fb_event *e, fb_event_waiter *wp, int64_t deadline)
{
    int64_t since = 0; /* when this call first queued */
    for (;;) {
        *wp = (fb_event_waiter){.efd = efd_get()};
        if (wp->efd < 0) return errno;
        atomic_init(&wp->state, W_QUEUED);
        spin_lock(e);
        /* Counted first, then one more try, under the guard where unlock pops waiters too:
         * an unlock that cleared the word before our count was visible is seen by this
         * try; one that comes later sees the count and finds us queued. No wake-up is lost. */
        atomic_fetch_add(&e->waiters, 1);
        if (try_take(e)) {
            atomic_fetch_sub(&e->waiters, 1);
            spin_unlock(e);
            efd_put(wp->efd);
            return 0;
        }
        if (!since) {
            wp->since = since = mono_ns(); /* a newcomer queues at the tail */
            if (e->tail)
                e->tail->next = wp;
            else
                e->head = wp;
            e->tail = wp;
        } else {
            wp->since = since; /* woken and beaten to the word: first in line again */
            wp->next = e->head;
            e->head = wp;
            if (!e->tail) e->tail = wp;
        }
        spin_unlock(e);
        int rc = wait_readable(wp->efd, deadline);
        if (rc != 0 && unqueue(e, wp)) {
            efd_put(wp->efd); /* never popped: nobody wrote it */
            return rc;
        }
        settle(wp); /* popped: wait for the write, empty the counter */
        efd_put(wp->efd);
        if (wp->handed || try_take(e)) return 0;
        /* Beaten by a newcomer: its unlock wakes us again. Give up if time ran out. */
        if (rc != 0) return rc;
    }
}

int fb_event_lock_timeout(fb_event *e, int64_t timeout_ns)
{
    if (try_take(e)) return 0;
    if (fb_self() && !fb_io_current()) return EPERM;
    int64_t deadline = timeout_ns < 0 ? -1 : mono_ns() + timeout_ns;
    atomic_fetch_add_explicit(&e->contended, 1, memory_order_relaxed);
    /* On the heap, never on the fiber's stack: another thread writes it while this fiber is
     * parked, and in copy-stack mode a parked fiber's stack addresses belong to another. */
    fb_event_waiter *wp = malloc(sizeof *wp);
    if (!wp) return ENOMEM;
    int rc = lock_slow(e, wp, deadline);
    free(wp);
    return rc;
}

int fb_event_lock(fb_event *e)
{
    return fb_event_lock_timeout(e, FB_FOREVER);
}

int fb_event_unlock(fb_event *e)
{
    if (!atomic_exchange(&e->locked, 0)) return EPERM;
    if (atomic_load(&e->waiters) > 0) wake_one(e);
    return 0;
}
