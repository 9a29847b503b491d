/* test-io.h - what test-io's case files share: the run's engine, scheduler and read policy from
 * the command line, the fixture every case starts and ends with, and the cases' functions. */
#ifndef SWITCHYARD_ENGINES_TESTS_TEST_IO_H
#define SWITCHYARD_ENGINES_TESTS_TEST_IO_H

#include "asserts.h"
#include "io.h"
#include "test-io-cases.h"

#include <netinet/in.h>
#include <stdint.h>

#define MS ((int64_t)1000000)

/* From the command line (test-io.c). */
extern const char *engine_name;
extern fb_policy policy;
extern fb_read_policy read_policy;

/* The IO layer and the runtime of the running case, made by start and freed by finish. */
extern fb_io *io;
extern fb_runtime *rt;

int64_t now_ns(void);
/* An IO layer on the run's engine and a runtime on it with fibers of stack_size bytes (0: the
 * default); exits 77 ("not run") when the kernel refuses the engine. */
void start(size_t stack_size);
void spawn(void (*fn)(void *), void *arg);
/* Run to completion; nothing may be left waiting (no dangling waiter or sleeper). */
void run_all(void);
void finish(void);

void unix_pair(int sv[2]);
/* Fill fd's send path until a non-blocking write would block. */
void fill(int fd);
/* A listening TCP socket on 127.0.0.1 with a kernel-chosen port. */
int tcp_listener(struct sockaddr_in *a);

/* Each case of test-io-cases.h is t_<name>, in test-io-<area>.c. */
#define TEST_IO__DECLARE(name, ...) void t_##name(void);
TEST_IO_CASES(TEST_IO__DECLARE)
#undef TEST_IO__DECLARE

#endif
