/* fiber_record_slab.h - the runtime's private allocator of fiber records: line-strided slabs. */
#ifndef SWITCHYARD_FIBER_RECORD_SLAB_H
#define SWITCHYARD_FIBER_RECORD_SLAB_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Records carved in creation order from slabs, the first FB__SLAB_FIRST bytes, each next one
 * twice as large up to FB__SLAB_HUGE: records made one after another lie one after another in
 * memory, which is the order a round-robin visits them, and a runtime of a few fibers stays
 * small. Slabs start on a page, so that where a record falls in its page does not depend on
 * what the heap held before. Records are never given back one by one (the runtime keeps its
 * own free list); fb__slabs_drain releases them all.
 */
enum { FB__SLAB_FIRST = 16 * 1024, FB__SLAB_HUGE = 2 * 1024 * 1024 };

struct fb__slab;
typedef struct fb__slabs {
    size_t stride;         /* bytes from one record to the next: whole cache lines */
    size_t shift;          /* where a record starts in its stride */
    bool huge;             /* slabs grow to FB__SLAB_HUGE bytes, on a huge page where granted */
    char *next;            /* the next unused stride of the newest slab */
    size_t left;           /* strides left there */
    size_t bytes;          /* the size of the next slab */
    struct fb__slab *list; /* every slab, newest first */
} fb__slabs;

void fb__slabs_init(fb__slabs *s, size_t stride, size_t shift, bool huge);
/* The next record's address (stride - shift bytes usable), or NULL with errno. */
void *fb__slabs_take(fb__slabs *s);
/* Release every slab; every record taken is gone. */
void fb__slabs_drain(fb__slabs *s);

#endif
