/* srv_test.h - what the scenario files of srv-test share: the server under test's command
 * line, the helpers every scenario uses, and the scenarios, declared once in srv_test_cases.h. */
#ifndef SWITCHYARD_SRV_TEST_H
#define SWITCHYARD_SRV_TEST_H

#include "srv_test_cases.h"
#include "tc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_IDLE_TICKS 20 /* CPU ticks (1/100 s) allowed over a 1 s idle window: 20% */
#define NOFILE         64 /* the server's fd limit in the EMFILE scenario */
#define SLOW_READERS   20 /* more than the thread pool's 16 workers by default */

/* The server under test: its path and flags, from srv-test's command line. */
extern char **st_server_argv;

/* Start the server of this test run, with up to two extra flags (NULL: none). */
void st_start_with(struct tc_server *s, const struct tc_limits *lim, const char *flag,
                   const char *value);

void st_start(struct tc_server *s);

void st_load(struct tc_server *s, int conns, size_t size, int rounds, bool halfclose);

/* A new connection that echoes `size` bytes once; the open fd is returned. */
int st_fresh(struct tc_server *s, uint32_t seed, size_t size);

/*
 * A fiber server started with --read-policy says so in its statistics, and the policy did
 * what it says: eager never waits before a read, wait and adaptive do.
 */
void st_check_read_policy(struct tc_server *s);

/*
 * The statistics name the stack mode that ran: null for a model without one, else never
 * empty (worker processes' parent printed "" once), and the --stack given ("copy" is K = 1).
 */
void st_check_stack(struct tc_server *s);

/* Open connections until the server runs out of fds; the first failure is returned. */
int st_fill_up(struct tc_server *s, int *ok, int *nok);

/* The accepting process holds at most `own` fds within timeout_ms (fork closes its copy of a
 * connection only once fork() has returned, which may be after the child already echoed). */
bool st_wait_own_fds(pid_t pid, int own, int timeout_ms);

void st_check_cpu_idle(struct tc_server *s, const char *what);

void st_slurp(int fd, char *buf, size_t cap);

/*
 * Run the binary with args and return its wait status, with its stdout and stderr. Both are
 * short (a pipe holds 64 KiB), so they are read after it exits; one that does not exit
 * within 10 s (it took the flags and started serving) is killed and reported.
 */
int st_run_cli(char *const args[], char *out, char *err, size_t cap);

int st_count_lines(const char *s);

/* Where a model's declared property `key` starts in its `--list --json` (a JSON value, not
 * terminated; a test failure when it is not declared). */
const char *st_model_prop(const char *model, const char *key);

/* Does the model under test declare the boolean property key in `--list --json`? */
bool st_model_declares(const char *model, const char *key);

/* Clients that send and never read: small receive buffers, filled side by side with as much
 * as the server takes (until nothing moves for 200 ms, at most 2 s); one, or n into fds. */
int st_slow_reader(struct tc_server *s);
void st_slow_readers(struct tc_server *s, int *fds, int n);

#define SRV_TEST__DECLARE(name, ...) void t_##name(void);
SRV_TEST_CASES(SRV_TEST__DECLARE)
#undef SRV_TEST__DECLARE

#endif
