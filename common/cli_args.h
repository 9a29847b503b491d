/* cli_args.h - what the programs' command lines share: a bad argument ends the program with
 * one line on stderr, naming the program, and exit status 2. */
#ifndef SWITCHYARD_CLI_ARGS_H
#define SWITCHYARD_CLI_ARGS_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static inline void __attribute__((noreturn, format(printf, 2, 3)))
cli_bad(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

/* The decimal integer s of flag, in lo..hi, or cli_bad. Digits only, with a leading '-' only
 * where lo is negative: strtol alone would also take leading blanks and a '+'. */
static inline long cli_long(const char *prog, const char *flag, const char *s, long lo, long hi)
{
    char *end;
    const char *digits = s + (lo < 0 && s[0] == '-');
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*digits < '0' || *digits > '9' || errno || *end || v < lo || v > hi)
        cli_bad(prog, "%s wants an integer in %ld..%ld, not '%s'", flag, lo, hi, s);
    return v;
}

#endif
