/* test-sched.h - what test-sched's two case files share: the run's configuration from the
 * command line, the helpers every case starts with, and the cases' functions. */
#ifndef SWITCHYARD_ENGINES_TESTS_TEST_SCHED_H
#define SWITCHYARD_ENGINES_TESTS_TEST_SCHED_H

#include "asserts.h"
#include "fiber.h"
#include "test-sched-cases.h"

#include <stdbool.h>

/* From the command line (test-sched.c). */
extern fb_config config;
extern bool copy_mode;    /* config.stack_mode == FB_STACK_COPY */
extern unsigned shared_k; /* copy mode: the shared stacks */

/* A runtime on the run's configuration; exits when it cannot be made. */
fb_runtime *new_runtime(void);
fb_stats stats_of(fb_runtime *rt);

/* Each case of test-sched-cases.h is test_<name>: the stack cases (alias, deep, records,
 * nohuge, ahead, overflow) in test-sched-stacks.c, the inline hop (inline_hop) in
 * test-sched-hop.c, the scheduling ones in test-sched.c. */
#define TEST_SCHED__DECLARE(name, ...) void test_##name(void);
TEST_SCHED_CASES(TEST_SCHED__DECLARE)
#undef TEST_SCHED__DECLARE

#endif
