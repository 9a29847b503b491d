/*
 * echo-load's worker as the core and the worker loop share it (load_core.c, load_worker.c): the
 * mode-visible part (struct ld_core, first) and what only they touch. Modes never include this.
 */
#ifndef SWITCHYARD_HARNESS_LOAD_WORKER_H
#define SWITCHYARD_HARNESS_LOAD_WORKER_H

#include "load_core.h"

#include <pthread.h>
#include <sys/resource.h>

#define BUF_SIZE 65536

struct worker {
    struct ld_core c; /* first: the core converts a mode's pointer back */
    int epfd;
    /* Slots that used up their read budget before EAGAIN: the edge that reported their bytes
     * is spent, so the loop reads them again itself, after its next look at the clock. */
    unsigned *again;
    unsigned nagain, again_head;
    unsigned connecting; /* slots in S_CONNECTING */
    unsigned next_open;  /* pingpong: slots below this one have been opened once */
    unsigned ramp_left;  /* connections still owing their first echo */
    bool ramp_reported, restart;
    int64_t ramp_deadline;
    struct ld_sync *sync;
    int64_t t_drain_end, t_cap, next_tick;
    int64_t t0; /* common start of the run */
    uint8_t *sbuf, *rbuf, *ebuf;
    struct rusage ru0, ru1;
    int64_t cpu0, cpu1;            /* CLOCK_THREAD_CPUTIME_ID at the window's start and end, ns */
    int64_t wall0, wall1;          /* wall1 0: the window's end is not taken yet */
    int64_t connect_failing_since; /* first failed connect since the last good one, or 0 */
    int64_t last_progress;         /* the last good connect or bytes echoed, or 0 */
    int last_connect_error;
    pthread_t thread;
};

/* ---- the slot state machine, as the worker loop drives it (load_core.c) -------------------- */

void ld__close_slot(struct slot *s);
/* Opens a new connection for the slot; the outcome arrives as an event or a failure. */
void ld__slot_open(struct worker *w, struct slot *s, int64_t now);
void ld__on_event(struct worker *w, struct slot *s, uint32_t ev, int64_t now);
/* Reads on, once each, the slots listed as having bytes left when the loop last came round. */
void ld__read_again(struct worker *w, int64_t now);
/* Timeouts and retries, every tick. */
void ld__scan(struct worker *w, int64_t now);

#endif
