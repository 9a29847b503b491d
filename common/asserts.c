/* asserts.c - the failure path of the shared assertions (asserts.h). */
#include "asserts.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void (*fail_hook)(void);

void check_on_fail(void (*hook)(void))
{
    fail_hook = hook;
}

static void __attribute__((noreturn)) finish(void)
{
    fputc('\n', stderr);
    void (*hook)(void) = fail_hook;
    fail_hook = NULL; /* a failing hook must not loop */
    if (hook) hook();
    exit(EXIT_FAILURE);
}

void check_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    finish();
}

void check__fail_msg(const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "FAIL %s:%d: ASSERT(%s): ", file, line, expr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    finish();
}
