/* switch_guard.c - names a stack overflow: a SIGSEGV handler that knows every guard page. */
#define _GNU_SOURCE
#include "switch.h"
#include "switch_guard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The registry is read from a signal handler, so the handler may take no lock and call no
 * allocator: it is a fixed open-addressing hash table of guard-page addresses with atomic
 * keys. Writers claim a slot with a compare-and-swap, fill it, and publish the key last with
 * release order; the handler reads keys with acquire order. 65536 slots are twice the number
 * of guarded stacks that vm.max_map_count's default of 65530 allows (two maps each), so the
 * table stays at most half full there. Removal leaves a tombstone that insertion reuses.
 */
enum { SLOTS = 1 << 16 };
enum { KEY_EMPTY = 0, KEY_TOMBSTONE = 1, KEY_BUSY = 2 }; /* never page addresses */

struct guard_slot {
    _Atomic uintptr_t key; /* the guard page's address */
    _Atomic size_t size;   /* usable bytes of the stack right above it */
};

static struct guard_slot table[SLOTS];
static size_t page_size;

/* Pages are at least 4 KiB, so the low 12 bits carry no information. */
static size_t slot_of(uintptr_t page)
{
    return (size_t)(((page >> 12) * UINT64_C(0x9E3779B97F4A7C15)) >> 48) & (SLOTS - 1);
}

int sw__guard_add(void *guard, size_t size)
{
    uintptr_t key = (uintptr_t)guard;
    for (size_t i = 0, s = slot_of(key); i < SLOTS; i++, s = (s + 1) & (SLOTS - 1)) {
        uintptr_t seen = atomic_load_explicit(&table[s].key, memory_order_relaxed);
        if (seen != KEY_EMPTY && seen != KEY_TOMBSTONE) continue;
        if (!atomic_compare_exchange_strong(&table[s].key, &seen, KEY_BUSY)) continue;
        atomic_store_explicit(&table[s].size, size, memory_order_relaxed);
        atomic_store_explicit(&table[s].key, key, memory_order_release);
        return 0;
    }
    errno = ENOMEM;
    return -1;
}

void sw__guard_remove(void *guard)
{
    uintptr_t key = (uintptr_t)guard;
    for (size_t i = 0, s = slot_of(key); i < SLOTS; i++, s = (s + 1) & (SLOTS - 1)) {
        uintptr_t seen = atomic_load_explicit(&table[s].key, memory_order_relaxed);
        if (seen == KEY_EMPTY) return;
        if (seen == key) {
            atomic_store_explicit(&table[s].key, KEY_TOMBSTONE, memory_order_release);
            return;
        }
    }
}

/* Async-signal-safe: the usable size of the stack guarded by `page`, or 0 if none is. */
__attribute__((no_sanitize("address"))) static size_t guarded_size(uintptr_t page)
{
    for (size_t i = 0, s = slot_of(page); i < SLOTS; i++, s = (s + 1) & (SLOTS - 1)) {
        uintptr_t seen = atomic_load_explicit(&table[s].key, memory_order_acquire);
        if (seen == KEY_EMPTY) return 0;
        if (seen == page) return atomic_load_explicit(&table[s].size, memory_order_relaxed);
    }
    return 0;
}

/* ---- the handler ------------------------------------------------------------------------ */

static struct sigaction previous_segv, previous_bus;

__attribute__((no_sanitize("address"))) static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

__attribute__((no_sanitize("address"))) static char *put_hex(char *p, uintptr_t v)
{
    char digits[16];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    p = put_str(p, "0x");
    while (n)
        *p++ = digits[--n];
    return p;
}

/*
 * One line with the raw write system call: stdio is not async-signal-safe, and in a program
 * linked with the fiber hooks (echo-server) neither is `write`. On a thread with the hooks on it
 * is the hook, which on an fd's first use looks it up and makes it non-blocking (a pipe to
 * stderr included), and on EAGAIN parks the fiber: not work for a handler running on the
 * overflowed fiber's behalf.
 */
__attribute__((no_sanitize("address"))) static void report(uintptr_t addr, uintptr_t lo,
                                                           uintptr_t hi)
{
    char line[160], *p = line;
    p = put_str(p, "fiber stack overflow: fault at ");
    p = put_hex(p, addr);
    p = put_str(p, " in guard page of stack [");
    p = put_hex(p, lo);
    p = put_str(p, ", ");
    p = put_hex(p, hi);
    p = put_str(p, ")\n");
    long ignored = syscall(SYS_write, STDERR_FILENO, line, (size_t)(p - line));
    (void)ignored;
}

/*
 * A fault that is not ours goes to whoever handled the signal before us (ASan, a debugger's
 * helper, a language runtime), called directly so that this handler stays installed for the
 * next overflow. With no previous handler the default action is restored: returning re-runs
 * the faulting instruction, which then kills the process with the original signal and
 * address; a signal sent by kill() is re-sent instead, since nothing would repeat it.
 */
__attribute__((no_sanitize("address"))) static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *prev = sig == SIGSEGV ? &previous_segv : &previous_bus;
    if ((prev->sa_flags & SA_SIGINFO) && prev->sa_sigaction) {
        prev->sa_sigaction(sig, si, uc);
        return;
    }
    if (!(prev->sa_flags & SA_SIGINFO) && prev->sa_handler != SIG_DFL &&
        prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
        return;
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0) raise(sig);
}

__attribute__((no_sanitize("address"))) static void on_fault(int sig, siginfo_t *si, void *uc)
{
    /* si_code > 0: raised by the kernel for a fault, so si_addr is meaningful. */
    if (si->si_code > 0) {
        uintptr_t addr = (uintptr_t)si->si_addr;
        uintptr_t page = addr & ~(uintptr_t)(page_size - 1);
        size_t size = guarded_size(page);
        if (size) {
            report(addr, page + page_size, page + page_size + size);
            abort();
        }
    }
    chain(sig, si, uc);
}

/* ---- installation ----------------------------------------------------------------------- */

/* Big enough for this handler and for a chained one such as ASan's report. */
enum { ALT_STACK_SIZE = 64 * 1024, ALT_STACK_MIN = 16 * 1024 };

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_errno;
static pthread_key_t alt_stack_key;
static __thread bool thread_ready;

/* Thread exit: stop using the alternate stack (unless replaced since), then unmap it. */
static void free_alt_stack(void *mem)
{
    stack_t cur, off = {.ss_flags = SS_DISABLE};
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == mem) sigaltstack(&off, NULL);
    munmap(mem, ALT_STACK_SIZE);
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    if (pthread_key_create(&alt_stack_key, free_alt_stack) != 0 ||
        sigaction(SIGSEGV, &sa, &previous_segv) != 0 || sigaction(SIGBUS, &sa, &previous_bus) != 0)
        install_errno = errno ? errno : EAGAIN;
}

/* The overflowing stack cannot host the handler, so each thread needs an alternate one.
 * One that is already there (ASan gives every thread its own) is kept. */
static int give_thread_alt_stack(void)
{
    stack_t cur;
    if (sigaltstack(NULL, &cur) != 0) return -1;
    if (!(cur.ss_flags & SS_DISABLE) && cur.ss_size >= ALT_STACK_MIN) return 0;
    void *mem =
        mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return -1;
    stack_t ss = {.ss_sp = mem, .ss_size = ALT_STACK_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        int saved = errno;
        munmap(mem, ALT_STACK_SIZE);
        errno = saved;
        return -1;
    }
    /* Only fails for lack of memory; the stack then simply outlives the thread. */
    (void)pthread_setspecific(alt_stack_key, mem);
    return 0;
}

int sw_overflow_guard_init(void)
{
    pthread_once(&install_once, install);
    if (install_errno) {
        errno = install_errno;
        return -1;
    }
    if (thread_ready) return 0;
    if (give_thread_alt_stack() != 0) return -1;
    thread_ready = true;
    return 0;
}
