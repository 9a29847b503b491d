/* test-timer-cases.h - test-timer's cases, declared once: the program's case table
 * (test-timer.c) and its tests (engines/tests/CMakeLists.txt reads this file) both come from
 * this list.
 *
 * X(name, property ...), one case per line; every case runs for every timer structure of the
 * registry. The properties decide which tests run the case:
 *   (none)       the structure alone, on a fake clock: engines/timers/<case>/<timers>
 *   runtime      through the fiber runtime and IO layer on the real clock, once per engine and
 *                scheduler: engines/timers/<case>/<timers>/<engine>/<sched>
 *   copy_stacks  also on copy stacks, on the engines the IO copy tests use
 */
#ifndef SWITCHYARD_ENGINES_TESTS_TEST_TIMER_CASES_H
#define SWITCHYARD_ENGINES_TESTS_TEST_TIMER_CASES_H

#define TEST_TIMER_CASES(X)                                                                        \
    X(bounds)                                                                                      \
    X(order)                                                                                       \
    X(equal)                                                                                       \
    X(cancel)                                                                                      \
    X(rearm)                                                                                       \
    X(million)                                                                                     \
    X(beyond_span)                                                                                 \
    X(far_idle)                                                                                    \
    X(runtime, runtime copy_stacks)                                                                \
    X(idle, runtime)

#endif
