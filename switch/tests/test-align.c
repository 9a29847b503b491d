/* test-align.c - a new context's stack is 16-byte aligned at entry, as the ABI (x86_64, aarch64)
 * requires. */
#include "check.h"

#include <stdlib.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

/*
 * x86_64: the ABI promises rsp + 8 is a multiple of 16 when a function starts, so after
 * `push rbp` the frame address is a multiple of 16, and the compiler places 16-byte aligned
 * locals relative to rsp without realigning. aarch64: AAPCS64 wants sp itself 16-byte aligned
 * at every instruction (the hardware may fault on an sp-relative access otherwise; qemu-user
 * does not check), so sp is read and checked directly as well. The addresses go through an
 * empty asm so the compiler cannot fold the "% 16" away on the strength of that very promise.
 */
static uintptr_t launder(const void *p)
{
    uintptr_t v = (uintptr_t)p;
    __asm__("" : "+r"(v));
    return v;
}

/* Report a misaligned address and exit, without stdio: on a misaligned stack printf itself
 * faults on its own aligned SSE spills, which would hide the finding behind a crash. */
static void __attribute__((noreturn)) misaligned(const char *where, uintptr_t addr)
{
    char hex[2 + 16 + 1] = "0x";
    for (int i = 0; i < 16; i++)
        hex[2 + i] = "0123456789abcdef"[(addr >> (60 - 4 * i)) & 15];
    hex[18] = '\0';
    const char *parts[] = {"FAIL " __FILE__ ": ", where, ": address ", hex,
                           " is not 16-byte aligned\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (write(STDERR_FILENO, parts[i], strlen(parts[i])) < 0) break;
    _exit(EXIT_FAILURE);
}

struct align {
    check_pair pair;
    int entered, checks;
};

/* Check the frame of the calling function, then store with movaps, which faults on an address
 * that is not a multiple of 16 (the check comes first so a failure says what went wrong). */
#if defined(__x86_64__)
static void __attribute__((noinline)) check_frame(struct align *a, const char *where)
{
    __m128 v;
    uintptr_t frame = launder(__builtin_frame_address(0));
    if (frame % 16) misaligned(where, frame);
    if (launder(&v) % 16) misaligned(where, launder(&v));
    __m128 ones = _mm_set1_ps(1.0f);
    __asm__ volatile("movaps %1, %0" : "=m"(v) : "x"(ones));
    ASSERT_EQ(_mm_movemask_ps(_mm_cmpeq_ps(v, ones)), 0xf);
    a->checks++;
}
#elif defined(__aarch64__)
/* sp as it is here, which AAPCS64 wants 16-byte aligned at all times. */
#define STACK_POINTER()                                                                            \
    ({                                                                                             \
        uintptr_t sp_;                                                                             \
        __asm__ volatile("mov %0, sp" : "=r"(sp_));                                                \
        sp_;                                                                                       \
    })

/* The frame, a 16-byte aligned local and sp; then a 16-byte store and load through q0. */
static void __attribute__((noinline)) check_frame(struct align *a, const char *where)
{
    _Alignas(16) unsigned char v[16];
    uintptr_t frame = launder(__builtin_frame_address(0)), sp = STACK_POINTER();
    if (frame % 16) misaligned(where, frame);
    if (sp % 16) misaligned(where, sp);
    if (launder(v) % 16) misaligned(where, launder(v));
    unsigned char ones[16];
    memset(ones, 1, sizeof ones);
    __asm__ volatile("ldr q0, [%1]\n\tstr q0, [%0]" : : "r"(v), "r"(ones) : "v0", "memory");
    ASSERT_EQ(memcmp(v, ones, sizeof v), 0);
    a->checks++;
}

static void check_sp(const char *where)
{
    uintptr_t sp = STACK_POINTER();
    if (sp % 16) misaligned(where, sp);
}
#endif

static void entry(void *arg)
{
    struct align *a = arg;
    /* The entry function's own frame: this is where a misaligned start shows first. */
    uintptr_t frame = launder(__builtin_frame_address(0));
#if defined(__aarch64__)
    check_sp("the entry function's stack pointer");
#endif
    if (frame % 16) misaligned("the entry function's frame", frame);
    a->entered++;
    check_frame(a, "called from entry");
    sw_jump(&a->pair.peer, &a->pair.main);
    check_frame(a, "after a switch back");
}

void check_align(const sw_backend *b)
{
    /* Stacks of a few sizes, all page multiples; the backend must align whatever it gets. */
    const size_t sizes[] = {SW_STACK_MIN, 64 * 1024, 64 * 1024 + 4096, 256 * 1024};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct align a = {.entered = 0};
        check_pair_init(&a.pair, b, sizes[i], entry, &a);
        sw_jump(&a.pair.main, &a.pair.peer);
        sw_jump(&a.pair.main, &a.pair.peer);
        ASSERT_EQ(sw_finished(&a.pair.peer), true);
        ASSERT_EQ(a.entered, 1);
        ASSERT_EQ(a.checks, 2);
        check_frame(&a, "main after the peer finished");
        check_pair_destroy(&a.pair);
    }
}

int test_align(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    check_align(b);
    return 0;
}
