/* switch_shstk.c - whether this process runs with a shadow stack, and the refusal of backends
 * that would crash under one. */
#define _GNU_SOURCE
#include "switch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * With Intel CET's shadow stack on, every `call` also pushes the return address on a second,
 * hardware-protected stack and every `ret` checks against it. A switch that moves the stack
 * pointer to another context's stack without moving the shadow stack pointer (rstorssp/
 * saveprevssp) leaves the shadow stack describing the old context, so the resumed context's
 * next `ret` faults (#CP, SIGSEGV). Only a backend that switches both may run; the others are
 * refused before any switch happens.
 *
 * Linux 6.6+ reports the state with arch_prctl(ARCH_SHSTK_STATUS); glibc 2.39+ turns the shadow
 * stack on at start-up for a program whose every object is marked SHSTK-compatible, with
 * GLIBC_TUNABLES=glibc.cpu.x86_shstk=on. Debian 12's kernel headers predate the constants.
 */
#ifndef ARCH_SHSTK_STATUS
#define ARCH_SHSTK_STATUS 0x5005
#endif
#ifndef ARCH_SHSTK_SHSTK
#define ARCH_SHSTK_SHSTK (1ULL << 0)
#endif

static int faked = -1; /* sw__fake_shadow_stack: -1 asks the kernel */

/* Read by sw_init_self and sw_make on every call, so kept as one flag: the kernel's answer at
 * start-up (glibc enables the shadow stack before any constructor runs), or a test's fake. */
bool sw__shstk_on;

static bool kernel_says_on(int *err)
{
#if defined(__x86_64__)
    unsigned long long features = 0;
    if (syscall(SYS_arch_prctl, ARCH_SHSTK_STATUS, &features) != 0) {
        *err = errno;
        return false;
    }
    *err = 0;
    return (features & ARCH_SHSTK_SHSTK) != 0;
#else
    *err = ENOSYS;
    return false;
#endif
}

__attribute__((constructor)) static void read_shstk_status(void)
{
    int err;
    sw__shstk_on = kernel_says_on(&err);
}

void sw__fake_shadow_stack(int enabled)
{
    faked = enabled;
    int err;
    sw__shstk_on = enabled >= 0 ? enabled == 1 : kernel_says_on(&err);
}

#if defined(__x86_64__)
/* "user_shstk" among the flags of /proc/cpuinfo: the CPU has it and the kernel offers it. */
static bool cpu_offers_user_shstk(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f) return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) found = strstr(line, " user_shstk") != NULL;
    fclose(f);
    return found;
}
#endif

bool sw_shadow_stack_enabled(const char **why_not)
{
    const char *dummy;
    if (!why_not) why_not = &dummy;
    *why_not = NULL;
    if (faked >= 0) {
        *why_not = faked ? NULL : "faked as disabled by a test";
        return faked == 1;
    }
#if defined(__x86_64__)
    static char why[256];
    int err;
    if (kernel_says_on(&err)) return true;
    if (err) {
        snprintf(why, sizeof why,
                 "the kernel has no user shadow stacks (arch_prctl ARCH_SHSTK_STATUS: %s; needs "
                 "Linux 6.6+ built with CONFIG_X86_USER_SHADOW_STACK and a CPU with CET)",
                 strerror(err));
        *why_not = why;
        return false;
    }
    *why_not = cpu_offers_user_shstk()
                   ? "not enabled in this process (glibc 2.39+ enables it with "
                     "GLIBC_TUNABLES=glibc.cpu.x86_shstk=on when every object is marked "
                     "SHSTK-compatible, -fcf-protection=return)"
                   : "the CPU or the kernel offers no user shadow stacks (no user_shstk in "
                     "/proc/cpuinfo)";
    return false;
#else
    *why_not = "x86_64 CET shadow stacks only (aarch64's guarded control stack is not handled)";
    return false;
#endif
}

const char *sw_backend_refusal(const sw_backend *b)
{
    if (!b || b->props.shadow_stack || !sw__shstk_on) return NULL;
    static char why[160];
    snprintf(why, sizeof why,
             "switch: backend %s refused: this process runs with a shadow stack, which %s does "
             "not switch",
             b->name, b->name);
    return why;
}
