/* fiber_record_slab.c - line-strided slabs of fiber records (fiber_record_slab.h). */
#include "fiber_record_slab.h"
#include "fiber.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

enum { LINE = 64, PAGE = 4096 };

/* Tests: slabs refuse huge pages (MADV_NOHUGEPAGE), as where DAMON or khugepaged split them. */
static bool refuse_huge;

void fb__no_huge_records(bool on)
{
    refuse_huge = on;
}

/* A slab's header; its records start at the first line after it. */
struct fb__slab {
    struct fb__slab *next;
    size_t bytes;
    bool mapped; /* by slab_map (munmap it), else by aligned_alloc */
};

/*
 * A slab of FB__SLAB_HUGE bytes on a huge page (copy mode). With 10^5 fibers the records fill
 * about 77 MB that a round-robin walks in order, and on 4 KiB pages every fifth resume
 * started on a page the TLB did not hold: a page walk, which on this VM (nested paging) costs
 * about as much as a miss to memory, and the hardware prefetchers start over at every page.
 * copystack/resume/bytes:8/fibers:100000, 2-core Xeon VM, 8 alternating runs: 36.3 ns median
 * with 4 KiB pages, 29.6 with huge ones (87.9 against 38.8 in a run beside another job). The
 * mapping is trimmed to an aligned 2 MiB so that transparent huge pages can back it
 * (enabled=madvise here); where they cannot, it is an ordinary mapping.
 */
static struct fb__slab *slab_map(void)
{
    const size_t huge = FB__SLAB_HUGE;
    char *p = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    char *at = (char *)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
    if (at > p) munmap(p, (size_t)(at - p));
    if (at + huge < p + 2 * huge) munmap(at + huge, (size_t)(p + 2 * huge - (at + huge)));
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    /* A hint: without it, the slab still works. */
    madvise(at, huge, refuse_huge ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
#endif
    struct fb__slab *slab = (struct fb__slab *)at;
    slab->mapped = true;
    return slab;
}

void fb__slabs_init(fb__slabs *s, size_t stride, size_t shift, bool huge)
{
    *s = (fb__slabs){.stride = stride, .shift = shift, .huge = huge, .bytes = FB__SLAB_FIRST};
}

void *fb__slabs_take(fb__slabs *s)
{
    if (!s->left) {
        size_t bytes = s->bytes;
        while (bytes < LINE + s->stride)
            bytes *= 2;
        struct fb__slab *slab;
        if (bytes >= FB__SLAB_HUGE && s->huge) {
            bytes = FB__SLAB_HUGE;
            slab = slab_map();
        } else if ((slab = aligned_alloc(PAGE, bytes))) {
            slab->mapped = false;
        }
        if (!slab) return NULL; /* errno from mmap or aligned_alloc */
        slab->bytes = bytes;
        slab->next = s->list;
        s->list = slab;
        s->next = (char *)slab + LINE;
        s->left = (bytes - LINE) / s->stride;
        s->bytes = bytes < FB__SLAB_HUGE ? bytes * 2 : FB__SLAB_HUGE;
    }
    void *r = s->next + s->shift;
    s->next += s->stride;
    s->left--;
    return r;
}

void fb__slabs_drain(fb__slabs *s)
{
    while (s->list) {
        struct fb__slab *slab = s->list;
        s->list = slab->next;
        if (slab->mapped)
            munmap(slab, slab->bytes);
        else
            free(slab);
    }
    s->next = NULL;
    s->left = 0;
}
