/* asserts.h - the one assertion vocabulary of every C test program (switch, engines, servers,
 * harness): a failed assertion prints where it failed, the expression and, for a comparison,
 * both values; then it runs the program's cleanup hook, if any, and exits 1. */
#ifndef SWITCHYARD_ASSERTS_H
#define SWITCHYARD_ASSERTS_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Print "FAIL file:line: <message>", run the hook, exit 1. Exiting (rather than returning)
 * works from inside any context, on any stack. */
void check_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
/* Called once by check_fail before it exits (e.g. to kill the server under test). */
void check_on_fail(void (*hook)(void));

/* A test program's cases, one of which its command line names. A program declares its cases
 * once, as an X-macro list X(name[, property ...]) in a header that its CMake list reads too,
 * and builds its table from that list. */
typedef struct test_case {
    const char *name;
    void (*fn)(void);
    /* The properties the declaration gives, space-separated ("" for none): they decide which
     * of CTest's matrices run the case. */
    const char *props;
} test_case;

/* `prog --list`: every case on its own line, its properties after its name, in the table's
 * order. CTest compares this with what CMake read from the same declaration. */
static inline void test_case_print_list(const test_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%s%s%s\n", cases[i].name, *cases[i].props ? " " : "", cases[i].props);
}
#define TEST_CASE_LIST(cases) test_case_print_list(cases, sizeof cases / sizeof cases[0])

/* The function of the case called `name` in cases[0..n). An unknown name is a usage error:
 * one line on stderr naming the program and the valid cases, then exit status 2. */
static inline void (*test_case_require(const char *prog, const test_case *cases, size_t n,
                                       const char *name))(void)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cases[i].name, name) == 0) return cases[i].fn;
    fprintf(stderr, "%s: unknown case '%s' (valid:", prog, name);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s %s", i ? "," : "", cases[i].name);
    fprintf(stderr, ")\n");
    exit(2);
}
#define TEST_CASE_REQUIRE(prog, cases, name)                                                       \
    test_case_require(prog, cases, sizeof cases / sizeof cases[0], name)

/* A condition that is not a comparison; ASSERT_MSG adds an explanation with the values. */
#define ASSERT(expr)                                                                               \
    do {                                                                                           \
        if (!(expr)) check_fail(__FILE__, __LINE__, "ASSERT(%s)", #expr);                          \
    } while (0)
#define ASSERT_MSG(expr, ...)                                                                      \
    do {                                                                                           \
        if (!(expr)) check__fail_msg(__FILE__, __LINE__, #expr, __VA_ARGS__);                      \
    } while (0)
void check__fail_msg(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

/* Integer comparisons, compared and printed as intmax_t. */
#define CHECK__INT_OP(a, op, b)                                                                    \
    do {                                                                                           \
        intmax_t check_a_ = (intmax_t)(a), check_b_ = (intmax_t)(b);                               \
        if (!(check_a_ op check_b_))                                                               \
            check_fail(__FILE__, __LINE__, "ASSERT(%s %s %s): %jd vs %jd", #a, #op, #b, check_a_,  \
                       check_b_);                                                                  \
    } while (0)
#define ASSERT_EQ(a, b) CHECK__INT_OP(a, ==, b)
#define ASSERT_NE(a, b) CHECK__INT_OP(a, !=, b)
#define ASSERT_LT(a, b) CHECK__INT_OP(a, <, b)
#define ASSERT_LE(a, b) CHECK__INT_OP(a, <=, b)
#define ASSERT_GT(a, b) CHECK__INT_OP(a, >, b)
#define ASSERT_GE(a, b) CHECK__INT_OP(a, >=, b)
/* A truth value, compared as 0 or 1 (prints the expression and what it was). */
#define ASSERT_TRUE(c)  CHECK__INT_OP(!!(c), ==, 1)
#define ASSERT_FALSE(c) CHECK__INT_OP(!!(c), ==, 0)

/* Unsigned 64-bit values whose full range matters (hashes, UINT64_MAX), printed in hex. */
#define ASSERT_HEX_EQ(a, b)                                                                        \
    do {                                                                                           \
        uint64_t check_a_ = (uint64_t)(a), check_b_ = (uint64_t)(b);                               \
        if (check_a_ != check_b_)                                                                  \
            check_fail(__FILE__, __LINE__, "ASSERT(%s == %s): 0x%" PRIx64 " vs 0x%" PRIx64, #a,    \
                       #b, check_a_, check_b_);                                                    \
    } while (0)

#define ASSERT_PTR_EQ(a, b)                                                                        \
    do {                                                                                           \
        const void *check_a_ = (a), *check_b_ = (b);                                               \
        if (check_a_ != check_b_)                                                                  \
            check_fail(__FILE__, __LINE__, "ASSERT(%s == %s): %p vs %p", #a, #b, check_a_,         \
                       check_b_);                                                                  \
    } while (0)

#define ASSERT_PTR_NE(a, b)                                                                        \
    do {                                                                                           \
        const void *check_a_ = (a), *check_b_ = (b);                                               \
        if (check_a_ == check_b_)                                                                  \
            check_fail(__FILE__, __LINE__, "ASSERT(%s != %s): both %p", #a, #b, check_a_);         \
    } while (0)

#define ASSERT_STR_NE(a, b)                                                                        \
    do {                                                                                           \
        const char *check_a_ = (a), *check_b_ = (b);                                               \
        if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0)                               \
            check_fail(__FILE__, __LINE__, "ASSERT(%s != %s): both \"%s\"", #a, #b, check_a_);     \
    } while (0)

#define ASSERT_STR_EQ(a, b)                                                                        \
    do {                                                                                           \
        const char *check_a_ = (a), *check_b_ = (b);                                               \
        if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0)                             \
            check_fail(__FILE__, __LINE__, "ASSERT(%s == %s): \"%s\" vs \"%s\"", #a, #b,           \
                       check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)");            \
    } while (0)

/* Equal bytes; a failure names the first differing offset and both bytes there. */
#define ASSERT_MEM_EQ(a, b, len)                                                                   \
    do {                                                                                           \
        const unsigned char *check_a_ = (const void *)(a), *check_b_ = (const void *)(b);          \
        size_t check_n_ = (len), check_i_ = 0;                                                     \
        while (check_i_ < check_n_ && check_a_[check_i_] == check_b_[check_i_])                    \
            check_i_++;                                                                            \
        if (check_i_ < check_n_)                                                                   \
            check_fail(__FILE__, __LINE__,                                                         \
                       "ASSERT(%s == %s, %zu bytes): byte %zu differs: 0x%02x vs 0x%02x", #a, #b,  \
                       check_n_, check_i_, check_a_[check_i_], check_b_[check_i_]);                \
    } while (0)

/* The haystack is printed in full: it is usually a child's captured stderr. */
#define ASSERT_CONTAINS(haystack, needle)                                                          \
    do {                                                                                           \
        const char *check_h_ = (haystack), *check_n_ = (needle);                                   \
        if (!strstr(check_h_, check_n_))                                                           \
            check_fail(__FILE__, __LINE__, "ASSERT(%s contains \"%s\"); it was:\n%s", #haystack,   \
                       check_n_, check_h_);                                                        \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
