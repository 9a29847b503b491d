/* test-sched-cases.h - test-sched's cases, declared once: the program's case table
 * (test-sched.c) and its tests (engines/tests/CMakeLists.txt reads this file) both come from this
 * list.
 *
 * X(name[, property ...]), one case per line. Every case runs on guarded stacks, for every
 * scheduling policy and switch backend; the properties add the copy-stack runs:
 *   copy_stacks     it runs fibers, so it also runs on one shared stack (copy mode, K = 1)
 *   copy_stacks_k3  the shared stack a fiber lands on matters, so it also runs with K = 3
 */
#ifndef SWITCHYARD_ENGINES_TESTS_TEST_SCHED_CASES_H
#define SWITCHYARD_ENGINES_TESTS_TEST_SCHED_CASES_H

#define TEST_SCHED_CASES(X)                                                                        \
    X(order, copy_stacks copy_stacks_k3)                                                           \
    X(join, copy_stacks)                                                                           \
    X(exit, copy_stacks)                                                                           \
    X(hops, copy_stacks copy_stacks_k3)                                                            \
    X(churn, copy_stacks copy_stacks_k3)                                                           \
    X(poller, copy_stacks)                                                                         \
    X(deadlock, copy_stacks)                                                                       \
    X(config)                                                                                      \
    X(alias, copy_stacks copy_stacks_k3)                                                           \
    X(deep, copy_stacks copy_stacks_k3)                                                            \
    X(records, copy_stacks copy_stacks_k3)                                                         \
    X(nohuge, copy_stacks)                                                                         \
    X(ahead, copy_stacks copy_stacks_k3)                                                           \
    X(overflow, copy_stacks)                                                                       \
    X(inline_hop, copy_stacks)

#endif
