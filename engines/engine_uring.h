/* engine_uring.h - internal: an io_uring whose every io_uring_enter and SQE is counted. */
#ifndef SWITCHYARD_ENGINE_URING_H
#define SWITCHYARD_ENGINE_URING_H

#include "engine.h"

#include <liburing.h>

/*
 * liburing sets the ring up and fills SQEs; submission and waiting are done here, by one
 * io_uring_enter per call, so that the engine knows every kernel entry it makes (liburing's
 * own submit and wait helpers may enter the kernel more than once, or not at all, depending
 * on ring flags the caller does not see). CQEs are read straight from the shared ring, which
 * costs no system call.
 */
typedef struct eng__ur {
    struct io_uring ring;
    eng_stats *st; /* uring_enters and uring_sqes are added here */
} eng__ur;

/* A ring of `entries` SQEs; 0, or -1 with errno (io_uring_setup's: ENOSYS, EPERM, ...). */
int eng__ur_init(eng__ur *u, unsigned entries, eng_stats *st);
void eng__ur_fini(eng__ur *u);
/* A free SQE, submitting the queued ones first (one counted enter) when the ring is full. */
struct io_uring_sqe *eng__ur_sqe(eng__ur *u);
/* Submit every queued SQE and wait up to timeout_ns (-1: no limit) for at least one CQE; with
 * timeout 0 the kernel is entered only when there is something to submit or a CQ overflow to
 * flush. Returns 0 (also on timeout and EINTR), or -1 with errno. */
int eng__ur_enter(eng__ur *u, int64_t timeout_ns);

#endif
