/* Log-linear latency histogram with bounded relative error (a small HdrHistogram-like design). */
#ifndef SWITCHYARD_HARNESS_HISTOGRAM_H
#define SWITCHYARD_HARNESS_HISTOGRAM_H

#include <stdint.h>
#include <stdio.h>

/*
 * Values are nanoseconds. Every power-of-two range [2^k, 2^(k+1)) above 2 * LD_HIST_SUB is
 * split into LD_HIST_SUB equal sub-buckets, so a bucket is never wider than 1/LD_HIST_SUB of
 * its lower bound; values below 2 * LD_HIST_SUB ns are kept exactly. A percentile is reported
 * as the middle of its bucket, which is within 1 / (2 * LD_HIST_SUB) = 0.39% of every value in
 * that bucket. The top bucket ends at 2^37 ns (137 s), past the 100 s the harness promises;
 * larger values are clamped into it but the exact maximum is kept separately.
 */
#define LD_HIST_SUB_BITS 7
#define LD_HIST_SUB      (1u << LD_HIST_SUB_BITS)
#define LD_HIST_TOP_BITS 37
#define LD_HIST_BUCKETS  ((LD_HIST_TOP_BITS - LD_HIST_SUB_BITS + 1) * LD_HIST_SUB)
#define LD_HIST_MAX_NS   ((UINT64_C(1) << LD_HIST_TOP_BITS) - 1)

/* A plain value type with no pointers, so it can be copied through a pipe between processes. */
struct ld_hist {
    uint64_t count;
    uint64_t min;    /* exact smallest value recorded (UINT64_MAX when empty) */
    uint64_t max;    /* exact largest value recorded, even beyond LD_HIST_MAX_NS */
    long double sum; /* for the mean; long double keeps 10^9 samples of 10^11 ns exact enough */
    uint64_t buckets[LD_HIST_BUCKETS];
};

void ld_hist_init(struct ld_hist *h);
void ld_hist_record(struct ld_hist *h, uint64_t ns);
/* Adds every sample of src into dst. */
void ld_hist_merge(struct ld_hist *dst, const struct ld_hist *src);
/*
 * The nearest-rank percentile (0 < p <= 100): the value whose rank is ceil(p/100 * count),
 * reported as the middle of its bucket clamped to the exact [min, max]. Returns 0 when empty.
 */
uint64_t ld_hist_percentile(const struct ld_hist *h, double p);
double ld_hist_mean(const struct ld_hist *h);
/*
 * The histogram as one JSON object in a mergeable form: its layout (sub_bits, top_bits), exact
 * count, min, max and sum in ns, and its non-empty buckets as [index, count] pairs. Two of them
 * with the same layout merge by adding counts per index (harness/lib/agents.py does).
 */
void ld_hist_json(FILE *f, const struct ld_hist *h);

/* Bucket geometry, exposed for the tests. */
unsigned ld_hist_index(uint64_t ns);
uint64_t ld_hist_bucket_low(unsigned index);
uint64_t ld_hist_bucket_width(unsigned index);

#endif
