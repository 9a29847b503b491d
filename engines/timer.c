/* timer.c - the timer structures' registry, in the order of engines/CMakeLists.txt. */
#define _GNU_SOURCE
#include "timer.h"
#include "timer_registry.h" /* TM_TIMERS(X): generated from engines/CMakeLists.txt */

#include <stdio.h>
#include <string.h>
#include <time.h>

#define TM__DECLARE(id) extern const tm_ops tm__##id;
TM_TIMERS(TM__DECLARE)
#undef TM__DECLARE

static const tm_ops *const timers[] = {
#define TM__ENTRY(id) &tm__##id,
    TM_TIMERS(TM__ENTRY)
#undef TM__ENTRY
};

size_t tm_count(void)
{
    return sizeof timers / sizeof timers[0];
}

const tm_ops *tm_at(size_t i)
{
    return i < tm_count() ? timers[i] : NULL;
}

const tm_ops *tm_find(const char *name)
{
    for (size_t i = 0; name && i < tm_count(); i++)
        if (strcmp(timers[i]->name, name) == 0) return timers[i];
    return NULL;
}

const tm_ops *tm_default(void)
{
    return timers[0];
}

const char *tm_names(void)
{
    static char names[256];
    if (!names[0]) {
        size_t used = 0;
        for (size_t i = 0; i < tm_count() && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     timers[i]->name);
    }
    return names;
}

int64_t tm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
