/* test-io-cases.h - test-io's cases, declared once: the program's case table (test-io.c) and its
 * tests (engines/tests/CMakeLists.txt reads this file) both come from this list.
 *
 * X(name, property ...), one case per line. The properties decide which tests run the case:
 *   every_policy   it reads or accepts, so it runs under every read policy (io.h), which change
 *                  when fb_read and fb_accept wait; without it, under eager only
 *   copy_stacks    it also runs on copy stacks, where every record a parked fiber shares (the
 *                  IO layer's wait) must be off its stack, on the engines that test that
 *   kernel_counts  it compares the engine's kernel-call counts with the kernel's under perf:
 *                  once per engine and scheduler, and not under ASan (whose own calls count)
 *   helper         no test of its own: another case runs it (kernel_calls, under perf)
 */
#ifndef SWITCHYARD_ENGINES_TESTS_TEST_IO_CASES_H
#define SWITCHYARD_ENGINES_TESTS_TEST_IO_CASES_H

#define TEST_IO_CASES(X)                                                                           \
    X(close_wait, every_policy copy_stacks)                                                        \
    X(fd_reuse, every_policy copy_stacks)                                                          \
    X(hup, every_policy copy_stacks)                                                               \
    X(err, every_policy copy_stacks)                                                               \
    X(half_close, every_policy copy_stacks)                                                        \
    X(duplex, every_policy copy_stacks)                                                            \
    X(sleepers, copy_stacks)                                                                       \
    X(timeout, every_policy copy_stacks)                                                           \
    X(moved_deadline, every_policy copy_stacks)                                                    \
    X(busy, every_policy copy_stacks)                                                              \
    X(ctl_pattern, every_policy)                                                                   \
    X(kernel_calls, kernel_counts)                                                                 \
    X(ctl_workload, helper)                                                                        \
    X(late_data, every_policy)                                                                     \
    X(late_accept, every_policy)                                                                   \
    X(file_read, every_policy)

#endif
