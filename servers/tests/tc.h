/* tc.h - the echo-server test driver's helpers: checks, the server process, /proc, clients. */
#ifndef SWITCHYARD_TC_H
#define SWITCHYARD_TC_H

#include "asserts.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Assertions: common/asserts.h; a failure also stops the server under test (tc_server.c). */
void tc_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
long long tc_now_ms(void);
void tc_sleep_ms(int ms);

/* ---- the server under test --------------------------------------------------------------- */
struct tc_server {
    pid_t pid;
    int port;
    int out_fd;       /* its stdout */
    char errpath[64]; /* its stderr, kept in a temporary file */
    char json[8192];  /* the statistics line, after tc_server_stop */
    char log[8192];   /* its stderr, after tc_server_stop */
    bool stopped;
    const char *model; /* the --model value */
    int kids0;         /* its children once listening (worker processes it keeps) */
};
/* Soft limits for the server process; 0 leaves a limit as inherited. */
struct tc_limits {
    long nofile;    /* RLIMIT_NOFILE */
    long as_bytes;  /* RLIMIT_AS (useless under ASan, which maps terabytes of shadow) */
    bool own_group; /* start it in a session and process group of its own (setsid) */
};
/* Start argv (the binary and its flags; --port 0 is added) under lim (NULL: inherited), and
 * wait for the "listening 127.0.0.1:PORT" line. */
void tc_server_start(struct tc_server *s, char *const argv[], const struct tc_limits *lim);
/* Send sig, expect exit 0 and one valid JSON line holding every required key. */
void tc_server_stop(struct tc_server *s, int sig);
/* The same with sig sent to the server's whole process group (as Ctrl-C does): start it with
 * own_group. */
void tc_server_stop_group(struct tc_server *s, int sig);
/* How many lines of the server's stderr contain needle. */
int tc_server_log_count(struct tc_server *s, const char *needle);

/* ---- /proc ------------------------------------------------------------------------------- */
int tc_proc_fds(pid_t pid);
/* The fds of pid and of each of its children (worker processes hold connections too). */
int tc_tree_fds(pid_t pid);
long tc_proc_threads(pid_t pid);
long tc_proc_rss_kb(pid_t pid);
/* CPU in clock ticks of pid, its reaped children and its live children. */
long long tc_proc_cpu_ticks(pid_t pid);
/* Children of pid (up to max pids written to out); *zombies counts those in state Z. */
int tc_proc_children(pid_t pid, pid_t *out, int max, int *zombies);
/* Wait until the server's tree holds at most `fds` open fds (tc_tree_fds) and no more
 * children than it kept once listening (fork's sessions ended); false on time. */
bool tc_wait_quiet(const struct tc_server *s, int fds, int timeout_ms);

/* ---- JSON: validate, and read a value by a dotted path ("epoll_ctl.add", "members.2.name") */
bool tc_json_valid(const char *s);
const char *tc_json_find(const char *s, const char *path);
bool tc_json_u64(const char *s, const char *path, uint64_t *out);
uint64_t tc_stat(struct tc_server *s, const char *path); /* fails the test if absent */

/* ---- clients ------------------------------------------------------------------------------- */
enum tc_rc { TC_OK, TC_CLOSED, TC_RESET, TC_TIMEOUT, TC_MISMATCH, TC_ERROR };
const char *tc_rc_name(int rc);
/* Blocking-style helpers on a non-blocking socket, all bounded by timeout_ms. */
int tc_connect(int port);
/* Send size bytes of conn's stream from offset *off and read them back exactly. */
int tc_echo(int fd, uint32_t seed, uint64_t *off, size_t size, int timeout_ms);
/* Has the server closed this connection (EOF or reset) within timeout_ms? */
int tc_wait_closed(int fd, int timeout_ms);
void tc_reset_close(int fd); /* close with SO_LINGER 0: the peer gets a RST */

/* Many connections at once, driven by poll: each does `rounds` messages of `size` bytes,
 * streaming (it writes while it reads). halfclose: after its one message the client shuts
 * down its sending side and expects every byte back, then EOF. */
struct tc_load {
    int conns;
    size_t size;
    int rounds;
    bool halfclose;
    int timeout_ms;
};
/* Returns TC_OK, or the first failure (with a description in why). */
int tc_echo_many(int port, const struct tc_load *cfg, char *why, size_t len);

#endif
