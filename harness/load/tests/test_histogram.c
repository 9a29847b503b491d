/* Histogram tests: bucket geometry, and percentiles within 1% of sorted samples for many shapes. */
#include "histogram.h"
#include "asserts.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 200000

static uint64_t rng_state = 0x243f6a8885a308d3ULL;

/* A fixed xorshift generator, so every run tests the same samples. */
static double uniform01(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static double normal01(void)
{
    return sqrt(-2.0 * log(uniform01())) * cos(6.283185307179586 * uniform01());
}

static uint64_t clamp_ns(double v)
{
    if (v < 0) return 0;
    return v > 1e11 ? (uint64_t)1e11 : (uint64_t)v;
}

/* Each generator returns nanoseconds; together they span 0 ns to 100 s. */
static uint64_t d_uniform(void)
{
    return clamp_ns(1e3 + uniform01() * 1e8);
}
static uint64_t d_exponential(void)
{
    return clamp_ns(-5e4 * log(uniform01()));
}
static uint64_t d_lognormal(void)
{
    return clamp_ns(1e5 * exp(1.5 * normal01()));
}
static uint64_t d_bimodal(void)
{
    return uniform01() < 0.9 ? clamp_ns(2e4 + 2e3 * normal01()) : clamp_ns(5e6 + 5e5 * normal01());
}
static uint64_t d_pareto(void)
{
    return clamp_ns(1e4 / pow(uniform01(), 1 / 1.2));
}
static uint64_t d_constant(void)
{
    return 123456;
}
static uint64_t d_tiny(void)
{
    return (uint64_t)(uniform01() * 300);
}
static uint64_t d_huge(void)
{
    return clamp_ns(1e9 + uniform01() * 99e9);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void check_geometry(void)
{
    for (unsigned i = 0; i + 1 < LD_HIST_BUCKETS; i++) {
        uint64_t lo = ld_hist_bucket_low(i), w = ld_hist_bucket_width(i);
        ASSERT_EQ(ld_hist_bucket_low(i + 1), lo + w); /* contiguous, no gaps or overlaps */
        ASSERT_EQ(ld_hist_index(lo), i);
        ASSERT_EQ(ld_hist_index(lo + w - 1), i);
        ASSERT(w == 1 || (double)w / (double)lo <= 1.0 / LD_HIST_SUB); /* bounded bucket width */
    }
    ASSERT_LT(ld_hist_index((uint64_t)100e9), LD_HIST_BUCKETS); /* 100 s fits below the top */
    ASSERT_EQ(ld_hist_index(UINT64_MAX), LD_HIST_BUCKETS - 1);
    struct ld_hist h;
    ld_hist_init(&h);
    ASSERT_EQ(ld_hist_percentile(&h, 99), 0);
}

static double check_shape(const char *name, uint64_t (*gen)(void), uint64_t *samples)
{
    static struct ld_hist whole, part[4];
    ld_hist_init(&whole);
    for (int k = 0; k < 4; k++)
        ld_hist_init(&part[k]);
    for (int i = 0; i < N; i++) {
        samples[i] = gen();
        ld_hist_record(&whole, samples[i]);
        ld_hist_record(&part[i % 4], samples[i]);
    }
    for (int k = 1; k < 4; k++)
        ld_hist_merge(&part[0], &part[k]);
    ASSERT_MEM_EQ(part[0].buckets, whole.buckets, sizeof(whole.buckets));
    ASSERT_EQ(part[0].count, whole.count);
    qsort(samples, N, sizeof(*samples), cmp_u64);
    ASSERT_EQ(whole.min, samples[0]);
    ASSERT_EQ(whole.max, samples[N - 1]);
    static const double ps[] = {0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};
    double worst = 0;
    for (size_t j = 0; j < sizeof(ps) / sizeof(*ps); j++) {
        size_t rank = (size_t)ceil(ps[j] / 100.0 * N);
        uint64_t exact = samples[rank ? rank - 1 : 0];
        uint64_t got = ld_hist_percentile(&whole, ps[j]);
        ASSERT_EQ(ld_hist_percentile(&part[0], ps[j]), got);
        double err = exact ? fabs((double)got - (double)exact) / (double)exact : (double)got;
        if (err > 0.01) {
            fprintf(stderr, "%s: p%g exact %llu ns, histogram %llu ns: error %.3f%% > 1%%\n", name,
                    ps[j], (unsigned long long)exact, (unsigned long long)got, err * 100);
            exit(1);
        }
        if (err > worst) worst = err;
    }
    printf("%-12s %7d samples  p50 %12.3f us  p99.9 %12.3f us  worst error %.3f%%\n", name, N,
           ld_hist_percentile(&whole, 50) / 1e3, ld_hist_percentile(&whole, 99.9) / 1e3,
           worst * 100);
    return worst;
}

int main(void)
{
    check_geometry();
    uint64_t *samples = malloc(N * sizeof(*samples));
    ASSERT_PTR_NE(samples, NULL);
    struct {
        const char *name;
        uint64_t (*gen)(void);
    } shapes[] = {{"uniform", d_uniform},     {"exponential", d_exponential},
                  {"lognormal", d_lognormal}, {"bimodal", d_bimodal},
                  {"pareto", d_pareto},       {"constant", d_constant},
                  {"tiny", d_tiny},           {"huge", d_huge}};
    double worst = 0;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(*shapes); i++) {
        double e = check_shape(shapes[i].name, shapes[i].gen, samples);
        worst = e > worst ? e : worst;
    }
    free(samples);
    printf("histogram accuracy ok: worst relative error %.3f%% (bound 1%%, design %.2f%%)\n",
           worst * 100, 50.0 / LD_HIST_SUB);
    return 0;
}
