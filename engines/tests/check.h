/* check.h - assertions for the engines tests: on failure, print both values and exit 1. */
#ifndef SWITCHYARD_ENGINES_CHECK_H
#define SWITCHYARD_ENGINES_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define ASSERT_CMP(a, op, b)                                                                       \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (!(a_ op b_)) {                                                                         \
            fprintf(stderr, "%s:%d: ASSERT(%s %s %s) failed: %lld vs %lld\n", __FILE__, __LINE__,  \
                    #a, #op, #b, a_, b_);                                                          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define ASSERT_EQ(a, b) ASSERT_CMP(a, ==, b)
#define ASSERT_LE(a, b) ASSERT_CMP(a, <=, b)
#define ASSERT_GE(a, b) ASSERT_CMP(a, >=, b)
#define ASSERT_TRUE(c)  ASSERT_EQ(!!(c), 1)

#endif
