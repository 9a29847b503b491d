/* Seeded, random-access payload stream and the classifier that names what went wrong in an echo. */
#ifndef SWITCHYARD_HARNESS_PAYLOAD_H
#define SWITCHYARD_HARNESS_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

/*
 * Each connection sends one endless pseudo-random byte stream; byte i depends only on (seed, i),
 * so any slice can be produced again to check an echo, across partial reads and writes, without
 * keeping a copy of what was sent. Consecutive requests are consecutive slices of the stream,
 * so a byte that comes back in the wrong request is caught as well.
 */
uint64_t ld_payload_seed(uint64_t run_seed, uint64_t slot, uint64_t serial);
void ld_payload_fill(uint64_t seed, uint64_t offset, uint8_t *buf, size_t len);

/* What a mismatch looks like, judged from the bytes that follow the first bad one. */
enum ld_mismatch_kind {
    LD_MM_FLIPPED,   /* one byte changed, the rest in place */
    LD_MM_MISSING,   /* a byte was dropped: what follows is the stream shifted left */
    LD_MM_EXTRA,     /* a byte was inserted, or bytes came back that were never sent */
    LD_MM_REORDERED, /* two neighbouring bytes swapped */
    LD_MM_CORRUPT,   /* anything else, or too few bytes to tell */
    LD_MM_KINDS
};

extern const char *const ld_mismatch_names[LD_MM_KINDS];

/*
 * got[0..len) arrived where exp[0..len) was due and got[at] != exp[at] is the first difference.
 * exp must hold len + 1 valid bytes (one past, to recognise a dropped byte).
 */
enum ld_mismatch_kind ld_mismatch_classify(const uint8_t *got, const uint8_t *exp, size_t len,
                                           size_t at);

#endif
