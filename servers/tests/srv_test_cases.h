/* srv_test_cases.h - srv-test's scenarios, declared once: the program's table (srv_test.c)
 * and its tests (servers/tests/CMakeLists.txt reads this file) both come from this list.
 *
 * X(name[, property ...]), one scenario per line (srv-test and CTest spell `_` as `-`). A
 * scenario runs where servers/tests/CMakeLists.txt asks for it, and also:
 *   every_model  against every model of the registry (under each read policy where a model
 *                takes the fiber runtime's flags): the bad-client matrix
 */
#ifndef SWITCHYARD_SRV_TEST_CASES_H
#define SWITCHYARD_SRV_TEST_CASES_H

#define SRV_TEST_CASES(X)                                                                          \
    X(echo, every_model)                                                                           \
    X(halfclose, every_model)                                                                      \
    X(reset, every_model)                                                                          \
    X(emfile, every_model)                                                                         \
    X(maxconns, every_model)                                                                       \
    X(fdleak, every_model)                                                                         \
    X(idle, every_model)                                                                           \
    X(sigterm, every_model)                                                                        \
    X(porttaken, every_model)                                                                      \
    X(slow_reader, every_model)                                                                    \
    X(zombies)                                                                                     \
    X(respawn)                                                                                     \
    X(groupstop)                                                                                   \
    X(spawnfail)                                                                                   \
    X(smoke)                                                                                       \
    X(badflags)                                                                                    \
    X(statsfull)                                                                                   \
    X(nomem)                                                                                       \
    X(nomem_burst)                                                                                 \
    X(ceiling)                                                                                     \
    X(bindany)                                                                                     \
    X(loadfloats)                                                                                  \
    X(timeouts)                                                                                    \
    X(polltick)

#endif
