/* Payload stream (splitmix64 over 8-byte words, addressed by offset) and the mismatch classifier.
 */
#include "payload.h"

#include <string.h>

const char *const ld_mismatch_names[LD_MM_KINDS] = {"flipped", "missing", "extra", "reordered",
                                                    "corrupt"};

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t ld_payload_seed(uint64_t run_seed, uint64_t slot, uint64_t serial)
{
    return mix64(run_seed ^ mix64(slot * UINT64_C(0x9e3779b97f4a7c15) + serial));
}

/* Word k of the stream; little-endian byte order inside the word gives byte 8k + j. */
static uint64_t word_at(uint64_t seed, uint64_t k)
{
    return mix64(seed + (k + 1) * UINT64_C(0x9e3779b97f4a7c15));
}

void ld_payload_fill(uint64_t seed, uint64_t offset, uint8_t *buf, size_t len)
{
    uint64_t k = offset >> 3;
    unsigned skip = (unsigned)(offset & 7);
    while (len > 0) {
        uint64_t w = word_at(seed, k++);
        uint8_t bytes[8];
        for (unsigned j = 0; j < 8; j++)
            bytes[j] = (uint8_t)(w >> (8 * j));
        size_t n = 8 - skip;
        if (n > len) n = len;
        memcpy(buf, bytes + skip, n);
        buf += n;
        len -= n;
        skip = 0;
    }
}

/* How many bytes after the first bad one we look at to decide; more would only cost time. */
#define LOOKAHEAD 16

enum ld_mismatch_kind ld_mismatch_classify(const uint8_t *got, const uint8_t *exp, size_t len,
                                           size_t at)
{
    size_t rest = len - at - 1; /* bytes received after the bad one */
    if (rest == 0) return LD_MM_CORRUPT;
    size_t m = rest < LOOKAHEAD ? rest : LOOKAHEAD;
    const uint8_t *g = got + at, *e = exp + at;
    if (memcmp(g + 1, e + 1, m) == 0) return LD_MM_FLIPPED;
    if (g[0] == e[1] && g[1] == e[0] && memcmp(g + 2, e + 2, m - 1) == 0) return LD_MM_REORDERED;
    if (memcmp(g, e + 1, m + 1) == 0) return LD_MM_MISSING;
    if (memcmp(g + 1, e, m) == 0) return LD_MM_EXTRA;
    return LD_MM_CORRUPT;
}
