/* test-engine-cases.h - test-engine's cases, declared once: the program's two case tables
 * (test-engine.c: the readiness form t_<name> and the completion form t_op_<name> of each
 * property) and its tests (engines/tests/CMakeLists.txt reads this file) both come from this
 * list.
 *
 * X(name), one case per line; every case runs for every engine of the registry.
 */
#ifndef SWITCHYARD_ENGINES_TESTS_TEST_ENGINE_CASES_H
#define SWITCHYARD_ENGINES_TESTS_TEST_ENGINE_CASES_H

#define TEST_ENGINE_CASES(X)                                                                       \
    X(high_fd)                                                                                     \
    X(deliver)                                                                                     \
    X(busy)                                                                                        \
    X(cancel)                                                                                      \
    X(pattern)                                                                                     \
    X(idle)                                                                                        \
    X(not_early)                                                                                   \
    X(hup)                                                                                         \
    X(err)                                                                                         \
    X(reuse)                                                                                       \
    X(late_close)                                                                                  \
    X(lost_edge)

#endif
