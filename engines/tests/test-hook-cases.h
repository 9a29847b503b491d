/* test-hook-cases.h - test-hook's cases, declared once: the program's case table (test-hook.c)
 * and its tests (engines/tests/CMakeLists.txt reads this file) both come from this list.
 *
 * X(name), one case per line; every case runs on each engine the tests choose for the hooks.
 */
#ifndef SWITCHYARD_ENGINES_TESTS_TEST_HOOK_CASES_H
#define SWITCHYARD_ENGINES_TESTS_TEST_HOOK_CASES_H

#define TEST_HOOK_CASES(X)                                                                         \
    X(nonblocking)                                                                                 \
    X(caller_nonblock)                                                                             \
    X(timeouts)                                                                                    \
    X(write_all)                                                                                   \
    X(poll)                                                                                        \
    X(close)                                                                                       \
    X(accept)                                                                                      \
    X(fallthrough)

#endif
