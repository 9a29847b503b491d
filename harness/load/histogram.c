/* Log-linear latency histogram: constant-time record, merge by addition, nearest-rank percentiles.
 */
#include "histogram.h"

#include <math.h>
#include <string.h>

void ld_hist_init(struct ld_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

/*
 * With e = max(0, msb(v) - SUB_BITS), index = SUB * e + (v >> e). For e = 0 this is v itself
 * (the exact region below 2 * SUB); for larger e, v >> e lies in [SUB, 2 * SUB), so each
 * exponent owns SUB consecutive indexes directly after the previous one.
 */
unsigned ld_hist_index(uint64_t ns)
{
    if (ns > LD_HIST_MAX_NS) ns = LD_HIST_MAX_NS;
    if (ns < 2 * LD_HIST_SUB) return (unsigned)ns;
    unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
    unsigned e = msb - LD_HIST_SUB_BITS;
    return LD_HIST_SUB * e + (unsigned)(ns >> e);
}

static unsigned index_shift(unsigned index)
{
    return index < 2 * LD_HIST_SUB ? 0 : index / LD_HIST_SUB - 1;
}

uint64_t ld_hist_bucket_low(unsigned index)
{
    unsigned e = index_shift(index);
    return (uint64_t)(index - LD_HIST_SUB * e) << e;
}

uint64_t ld_hist_bucket_width(unsigned index)
{
    return UINT64_C(1) << index_shift(index);
}

void ld_hist_record(struct ld_hist *h, uint64_t ns)
{
    h->buckets[ld_hist_index(ns)]++;
    h->count++;
    h->sum += (long double)ns;
    if (ns < h->min) h->min = ns;
    if (ns > h->max) h->max = ns;
}

void ld_hist_merge(struct ld_hist *dst, const struct ld_hist *src)
{
    if (src->count == 0) return;
    for (unsigned i = 0; i < LD_HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
}

uint64_t ld_hist_percentile(const struct ld_hist *h, double p)
{
    if (h->count == 0) return 0;
    if (p >= 100.0) return h->max;
    double want = ceil(p / 100.0 * (double)h->count);
    uint64_t rank = want < 1.0 ? 1 : (uint64_t)want;
    uint64_t seen = 0;
    for (unsigned i = 0; i < LD_HIST_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen < rank) continue;
        /* The exact extremes are known, so a bucket holding one of them never reports beyond it. */
        uint64_t mid = ld_hist_bucket_low(i) + (ld_hist_bucket_width(i) - 1) / 2;
        if (mid < h->min) mid = h->min;
        if (mid > h->max) mid = h->max;
        return mid;
    }
    return h->max;
}

double ld_hist_mean(const struct ld_hist *h)
{
    return h->count ? (double)(h->sum / (long double)h->count) : 0.0;
}

void ld_hist_json(FILE *f, const struct ld_hist *h)
{
    fprintf(f,
            "{\"layout\":\"log-linear\",\"sub_bits\":%u,\"top_bits\":%u,\"count\":%llu,"
            "\"min\":%llu,\"max\":%llu,\"sum\":%.0Lf,\"buckets\":[",
            LD_HIST_SUB_BITS, LD_HIST_TOP_BITS, (unsigned long long)h->count,
            (unsigned long long)(h->count ? h->min : 0), (unsigned long long)h->max, h->sum);
    const char *sep = "";
    for (unsigned i = 0; i < LD_HIST_BUCKETS; i++) {
        if (!h->buckets[i]) continue;
        fprintf(f, "%s[%u,%llu]", sep, i, (unsigned long long)h->buckets[i]);
        sep = ",";
    }
    fputs("]}", f);
}
