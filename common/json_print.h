/* json_print.h - the JSON writer the binaries' `--list --json` listings share. */
#ifndef SWITCHYARD_JSON_PRINT_H
#define SWITCHYARD_JSON_PRINT_H

#include <stdbool.h>
#include <stdio.h>

/* A JSON string: quotes and backslashes escaped, control characters as \uXXXX. */
static inline void json_print_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* `"key": "value"` or `"key": true`, preceded by sep (e.g. ", "). */
static inline void json_print_str_field(FILE *f, const char *sep, const char *key, const char *v)
{
    fputs(sep, f);
    json_print_string(f, key);
    fputs(": ", f);
    json_print_string(f, v);
}

static inline void json_print_bool_field(FILE *f, const char *sep, const char *key, bool v)
{
    fputs(sep, f);
    json_print_string(f, key);
    fputs(v ? ": true" : ": false", f);
}

static inline void json_print_int_field(FILE *f, const char *sep, const char *key, long v)
{
    fputs(sep, f);
    json_print_string(f, key);
    fprintf(f, ": %ld", v);
}

#endif
