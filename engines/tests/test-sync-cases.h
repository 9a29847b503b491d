/* test-sync-cases.h - test-sync's cases, declared once: the program's case table (test-sync.c)
 * and its tests (engines/tests/CMakeLists.txt reads this file) both come from this list.
 *
 * X(name[, property ...]), one case per line. A case runs under each scheduling policy, unless:
 *   threads  it runs across scheduler threads (each runs ring): one test, under ring
 */
#ifndef SWITCHYARD_ENGINES_TESTS_TEST_SYNC_CASES_H
#define SWITCHYARD_ENGINES_TESTS_TEST_SYNC_CASES_H

#define TEST_SYNC_CASES(X)                                                                         \
    X(mutex_fifo)                                                                                  \
    X(mutex_errors)                                                                                \
    X(cond_wakeup)                                                                                 \
    X(sem_cap)                                                                                     \
    X(shutdown)                                                                                    \
    X(event_exclusion, threads)                                                                    \
    X(event_timeout, threads)                                                                      \
    X(deadlock_pthread_mutex, threads)                                                             \
    X(deadlock_event_lock, threads)

#endif
