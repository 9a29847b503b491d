/* Payload tests: the stream is random-access and seed-specific; mismatches are named correctly. */
#include "payload.h"
#include "asserts.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LEN 4096

static void check_random_access(void)
{
    static uint8_t whole[LEN], part[LEN];
    uint64_t seed = ld_payload_seed(42, 7, 1);
    ld_payload_fill(seed, 0, whole, LEN);
    /* Every (offset, length) slice equals the same bytes of the whole stream. */
    for (size_t off = 0; off < 64; off++)
        for (size_t len = 1; len < 40; len++) {
            ld_payload_fill(seed, off, part, len);
            ASSERT_MEM_EQ(part, whole + off, len);
        }
    ld_payload_fill(seed, 1000, part, LEN - 1000);
    ASSERT_MEM_EQ(part, whole + 1000, LEN - 1000);
    /* Another slot, connection or run seed gives another stream. */
    uint64_t others[] = {ld_payload_seed(42, 8, 1), ld_payload_seed(42, 7, 2),
                         ld_payload_seed(43, 7, 1)};
    for (size_t i = 0; i < 3; i++) {
        ASSERT_NE(others[i], seed);
        ld_payload_fill(others[i], 0, part, LEN);
        ASSERT_NE(memcmp(part, whole, LEN), 0);
    }
    /* Bytes look random enough that a shifted stream cannot match itself for long. */
    size_t same = 0;
    for (size_t i = 0; i + 1 < LEN; i++)
        same += whole[i] == whole[i + 1];
    ASSERT_LT(same, LEN / 64);
}

static enum ld_mismatch_kind classify_after(void (*damage)(uint8_t *, size_t *, size_t), size_t at)
{
    static uint8_t exp[LEN + 1], got[LEN + 1];
    ld_payload_fill(ld_payload_seed(1, 2, 3), 0, exp, LEN + 1);
    memcpy(got, exp, LEN + 1);
    size_t n = 200;
    damage(got, &n, at);
    size_t first = 0;
    while (got[first] == exp[first])
        first++;
    ASSERT(first == at || first == at + 1); /* a swap or insert may equal by chance at `at` */
    return ld_mismatch_classify(got, exp, n, first);
}

static void flip(uint8_t *b, size_t *n, size_t at)
{
    (void)n, b[at] ^= 0x40;
}
static void drop(uint8_t *b, size_t *n, size_t at)
{
    memmove(b + at, b + at + 1, --*n - at);
}
static void insert(uint8_t *b, size_t *n, size_t at)
{
    memmove(b + at + 1, b + at, (*n)++ - at);
    b[at] = (uint8_t)~b[at + 1];
}
static void swap(uint8_t *b, size_t *n, size_t at)
{
    (void)n;
    uint8_t t = b[at];
    b[at] = b[at + 1];
    b[at + 1] = t;
}
static void garble(uint8_t *b, size_t *n, size_t at)
{
    for (size_t i = at; i < *n; i++)
        b[i] = (uint8_t)(b[i] * 7 + 3);
}

static void check_classifier(void)
{
    size_t positions[] = {0, 1, 17, 100, 180};
    for (size_t i = 0; i < sizeof(positions) / sizeof(*positions); i++) {
        size_t at = positions[i];
        ASSERT_EQ(classify_after(flip, at), LD_MM_FLIPPED);
        ASSERT_EQ(classify_after(drop, at), LD_MM_MISSING);
        ASSERT_EQ(classify_after(insert, at), LD_MM_EXTRA);
        ASSERT_EQ(classify_after(swap, at), LD_MM_REORDERED);
        ASSERT_EQ(classify_after(garble, at), LD_MM_CORRUPT);
    }
    /* A bad last byte has nothing after it to judge by. */
    uint8_t exp[3] = {1, 2, 3}, got[2] = {1, 9};
    ASSERT_EQ(ld_mismatch_classify(got, exp, 2, 1), LD_MM_CORRUPT);
    ASSERT_STR_EQ(ld_mismatch_names[LD_MM_MISSING], "missing");
}

int main(void)
{
    check_random_access();
    check_classifier();
    printf("payload stream and mismatch classifier ok\n");
    return 0;
}
