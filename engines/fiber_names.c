/* fiber_names.c - the names of the runtime's stack modes, scheduling policies and IO read
 * policies, and their parsers. */
#include <stdlib.h>
#include <string.h>

#include "fiber.h"
#include "io.h"

const char *fb_stack_mode_name(fb_stack_mode m)
{
    return m == FB_STACK_GUARDED ? "guarded" : m == FB_STACK_COPY ? "copy" : "?";
}

int fb_stack_mode_parse(const char *text, fb_stack_mode *mode, unsigned *shared_stacks)
{
    if (text && strcmp(text, "guarded") == 0) {
        *mode = FB_STACK_GUARDED;
        *shared_stacks = 0;
        return 0;
    }
    if (!text || strncmp(text, "copy", 4) != 0) return -1;
    unsigned long k = 1;
    if (text[4] == ':') {
        char *end;
        if (text[5] < '0' || text[5] > '9') return -1;
        k = strtoul(text + 5, &end, 10);
        if (*end || k < 1 || k > FB_SHARED_STACKS_MAX) return -1;
    } else if (text[4]) {
        return -1;
    }
    *mode = FB_STACK_COPY;
    *shared_stacks = (unsigned)k;
    return 0;
}

const char *fb_policy_name(fb_policy p)
{
    return p == FB_STAR ? "star" : p == FB_RING ? "ring" : "?";
}

int fb_policy_parse(const char *name, fb_policy *out)
{
    if (name && strcmp(name, "star") == 0)
        *out = FB_STAR;
    else if (name && strcmp(name, "ring") == 0)
        *out = FB_RING;
    else
        return -1;
    return 0;
}

static const char *const read_policy_names[] = {"eager", "wait", "adaptive"};

const char *fb_read_policy_name(fb_read_policy p)
{
    return (unsigned)p < 3 ? read_policy_names[p] : "?";
}

int fb_read_policy_parse(const char *name, fb_read_policy *out)
{
    for (int i = 0; name && i < 3; i++)
        if (strcmp(name, read_policy_names[i]) == 0) {
            *out = (fb_read_policy)i;
            return 0;
        }
    return -1;
}

const char *fb_read_policy_names(void)
{
    return "eager, wait, adaptive";
}
