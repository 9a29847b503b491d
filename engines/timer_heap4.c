/* timer_heap4.c - timers member "heap4": a 4-ary min-heap of deadlines (Go's per-P timers). */
#define TM_DHEAP_ARITY 4
#include "timer_dheap.h"

/*
 * Go keeps each P's timers in a 4-ary heap: half the levels of a binary heap, so an arm that
 * sifts up touches fewer nodes, at the price of comparing four children on the way down.
 */
const tm_ops tm__heap4 =
    TM_DHEAP_OPS("heap4", "4-ary min-heap of deadlines (Go's per-P timers), exact");
