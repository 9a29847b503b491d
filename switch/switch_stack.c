/* switch_stack.c - guarded mmap stacks, registered with Valgrind and the overflow guard. */
#include "switch.h"
#include "switch_guard.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef SWITCHYARD_HAVE_VALGRIND_H
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#endif
#ifdef SWITCHYARD_ASAN
#include <sanitizer/asan_interface.h>
#endif

static size_t page_size(void)
{
    static size_t page;
    if (!page) page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

static const sw_stack_mode stack_modes[] = {
    {"guarded", "one mapping per context, a PROT_NONE guard page below it", false},
    {"copy",
     "K guarded stacks shared by all contexts of a runtime, each one's live part "
     "(sw_live_sp to the top) copied out when another needs the stack, copied back "
     "before it resumes (needs props.copy_stack)",
     true},
};

size_t sw_stack_mode_count(void)
{
    return sizeof stack_modes / sizeof stack_modes[0];
}

const sw_stack_mode *sw_stack_mode_at(size_t i)
{
    return i < sw_stack_mode_count() ? &stack_modes[i] : NULL;
}

int sw_stack_alloc(sw_stack *st, size_t size)
{
    size_t page = page_size();
    if (!st || size == 0) {
        errno = EINVAL;
        return -1;
    }
    size = (size + page - 1) & ~(page - 1);
    if (size < SW_STACK_MIN) size = SW_STACK_MIN;
    size_t total = size + page;
    void *map = mmap(NULL, total, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) return -1;
    /* The guard page splits the mapping in two; this is where vm.max_map_count bites. */
    if (mprotect(map, page, PROT_NONE) != 0 || sw__guard_add(map, size) != 0) {
        int saved = errno;
        munmap(map, total);
        errno = saved;
        return -1;
    }
    st->map = map;
    st->map_size = total;
    st->base = (char *)map + page;
    st->size = size;
#ifdef SWITCHYARD_HAVE_VALGRIND_H
    st->vg_id = VALGRIND_STACK_REGISTER(st->base, (char *)st->base + size);
#else
    st->vg_id = 0;
#endif
    return 0;
}

void sw_stack_copy(void *dst, const void *src, size_t n)
{
#ifdef SWITCHYARD_ASAN
    __asan_unpoison_memory_region(src, n);
    __asan_unpoison_memory_region(dst, n);
#endif
#ifdef SWITCHYARD_HAVE_VALGRIND_H
    VALGRIND_MAKE_MEM_UNDEFINED(dst, n);
#endif
    memcpy(dst, src, n);
}

void sw_stack_free(sw_stack *st)
{
    if (!st || !st->map) return;
#ifdef SWITCHYARD_HAVE_VALGRIND_H
    VALGRIND_STACK_DEREGISTER(st->vg_id);
#endif
    sw__guard_remove(st->map);
#ifdef SWITCHYARD_ASAN
    /* Frames of a context that never finished stay poisoned in ASan's shadow; whatever is
     * mapped here next must not inherit that. */
    __asan_unpoison_memory_region(st->base, st->size);
#endif
    munmap(st->map, st->map_size);
    st->map = st->base = NULL;
    st->size = st->map_size = 0;
}
