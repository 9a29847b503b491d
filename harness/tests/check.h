/* Minimal assertions for the harness tests: a failed check prints both values and exits 1. */
#ifndef SWITCHYARD_HARNESS_CHECK_H
#define SWITCHYARD_HARNESS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U(a, b)                                                                           \
    do {                                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);             \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %s failed: %llu != %llu\n", __FILE__, __LINE__, #a, #b,  \
                    a_, b_);                                                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
