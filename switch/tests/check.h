/* check.h - the test table and child-process helpers of the switch tests (assertions:
 * common/asserts.h). */
#ifndef SWITCHYARD_SWITCH_TESTS_CHECK_H
#define SWITCHYARD_SWITCH_TESTS_CHECK_H

#include "asserts.h"
#include "switch.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* CTest's SKIP_RETURN_CODE for every test: printed as "not run: <why>", never a silent pass. */
#define CHECK_SKIP 77

/* ---- the test table ----------------------------------------------------------------------- */

/* A test returns 0 when it passed or CHECK_SKIP after printing "not run: ...". Per-backend tests
 * get the backend under test; global tests get NULL. argc/argv are what follows the test name
 * and backend on the command line. */
typedef int (*check_fn)(const sw_backend *b, int argc, char **argv);

/* X(c_name, "command-line-name", per_backend). The CMake list in tests/CMakeLists.txt names
 * the same tests; the runner refuses names it does not know, so the two cannot drift apart
 * silently. */
#define CHECK_TESTS(X)                                                                             \
    X(backends, "backends", false)                                                                 \
    X(api, "api", false)                                                                           \
    X(make_errors, "make-errors", true)                                                            \
    X(pingpong, "pingpong", true)                                                                  \
    X(regs, "regs", true)                                                                          \
    X(align, "align", true)                                                                        \
    X(fpu, "fpu", true)                                                                            \
    X(sigmask, "sigmask", true)                                                                    \
    X(syscalls, "syscalls", true)                                                                  \
    X(syscall_loop, "syscall-loop", true)                                                          \
    X(stack_use, "stack-use", true)                                                                \
    X(overflow, "overflow", true)                                                                  \
    X(many, "many", true)                                                                          \
    X(entry_return, "entry-return", true)                                                          \
    X(finished_jump, "finished-jump", true)                                                        \
    X(copy_stack, "copy-stack", true)                                                              \
    X(forged_resume, "forged-resume", true)                                                        \
    X(memcheck, "memcheck", true)                                                                  \
    X(fortify, "fortify", true)                                                                    \
    X(inline, "inline", true)                                                                      \
    X(shadow_stack_refusal, "shadow-stack-refusal", true)                                          \
    X(shadow_stack, "shadow-stack", true)

#define CHECK__DECLARE(c_name, cli_name, per_backend)                                              \
    int test_##c_name(const sw_backend *b, int argc, char **argv);
CHECK_TESTS(CHECK__DECLARE)
#undef CHECK__DECLARE

/* ---- pieces the composite tests (memcheck, fortify) reuse --------------------------------- */

void check_pingpong(const sw_backend *b, long switches);
void check_regs(const sw_backend *b, int rounds);
void check_align(const sw_backend *b);
void check_entry_return(const sw_backend *b);
void check_stack_use(const sw_backend *b);

/* ---- helpers ------------------------------------------------------------------------------ */

/* Two contexts of one backend: `main` is the calling thread, `peer` runs entry(arg) on a fresh
 * guarded stack and resumes `main` when entry returns. Failures assert. */
typedef struct check_pair {
    sw_ctx main, peer;
    sw_stack stack;
} check_pair;

void check_pair_init(check_pair *p, const sw_backend *b, size_t stack_size, sw_entry_fn entry,
                     void *arg);
void check_pair_destroy(check_pair *p);

/* What a child process did: its wait status and the start of what it wrote on stderr. */
typedef struct check_child {
    int status;
    char err[4096];
} check_child;

/* Run fn(arg) in a forked child with stderr captured, no core dump and a 20 s alarm; the child
 * exits 0 if fn returns. */
void check_run_child(void (*fn)(void *), void *arg, check_child *out);
/* "exited 0", "killed by SIGABRT", ... */
const char *check_describe_status(int status, char *buf, size_t size);

/* Number of lines in /proc/self/maps (one per mapping), read without allocating memory. */
long check_maps_count(void);

/*
 * regs_<arch>.S: load in[] into the callee-saved registers (x86_64: rbx, rbp, r12-r15;
 * aarch64: x19-x29, then d8-d15), call jump(from, to), store the registers as they are on
 * return into out[], restore the caller's values and return. Whatever ran in between must
 * have kept them.
 */
#if defined(__x86_64__)
#define CHECK_REGS 6
#elif defined(__aarch64__)
#define CHECK_REGS 19
#endif
void check_regs_switch(void (*jump)(sw_ctx *from, sw_ctx *to), sw_ctx *from, sw_ctx *to,
                       const uint64_t in[CHECK_REGS], uint64_t out[CHECK_REGS]);

#endif
