/* timer_heap.c - timers member "heap": a binary min-heap of deadlines (libuv's structure). */
#define TM_DHEAP_ARITY 2
#include "timer_dheap.h"

/*
 * The default. The scheduler needs one thing from the timers on every poll, the earliest
 * deadline, and the heap keeps it at the root; arming and cancelling cost O(log n) in one
 * contiguous array of pointers, and deadlines stay exact to the nanosecond. Whether a wheel's
 * O(1) arming pays off where every read arms a timeout that the data cancels is what the
 * timers rows of switch-bench measure (engines/README.md, "Timer structures").
 */
const tm_ops tm__heap = TM_DHEAP_OPS("heap", "binary min-heap of deadlines (libuv), exact");
