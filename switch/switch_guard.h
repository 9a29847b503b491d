/* switch_guard.h - internal: the guard-page registry that the stack allocator fills. */
#ifndef SWITCHYARD_SWITCH_GUARD_H
#define SWITCHYARD_SWITCH_GUARD_H

#include <stddef.h>

/* Record that the page at `guard` protects the `size` usable bytes right above it. Returns
 * 0, or -1 with errno = ENOMEM when the registry is full. Thread-safe, lock-free. */
int sw__guard_add(void *guard, size_t size);
/* Forget the guard page at `guard` (before it is unmapped). Thread-safe. */
void sw__guard_remove(void *guard);

#endif
