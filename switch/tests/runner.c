/* runner.c - switch-tests entry point: runs one named test, for one backend, in this process. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct test {
    const char *name;
    check_fn fn;
    bool per_backend;
} tests[] = {
#define CHECK__ENTRY(c_name, cli_name, per_backend) {cli_name, test_##c_name, per_backend},
    CHECK_TESTS(CHECK__ENTRY)
#undef CHECK__ENTRY
};

enum { NTESTS = sizeof tests / sizeof tests[0] };

static void list_tests(FILE *to, const char *sep)
{
    for (size_t i = 0; i < NTESTS; i++)
        fprintf(to, "%s%s", i ? sep : "", tests[i].name);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: switch-tests TEST [BACKEND] [ARGS...] | --list | --list-backends\n");
        return 2;
    }
    if (strcmp(argv[1], "--list") == 0) {
        list_tests(stdout, "\n");
        printf("\n");
        return 0;
    }
    if (strcmp(argv[1], "--list-backends") == 0) {
        for (size_t i = 0; i < sw_backend_count(); i++)
            printf("%s\n", sw_backend_at(i)->name);
        return 0;
    }
    const struct test *t = NULL;
    for (size_t i = 0; i < NTESTS && !t; i++)
        if (strcmp(tests[i].name, argv[1]) == 0) t = &tests[i];
    if (!t) {
        fprintf(stderr, "switch-tests: unknown test '%s' (valid: ", argv[1]);
        list_tests(stderr, ", ");
        fprintf(stderr, ")\n");
        return 2;
    }
    const sw_backend *b = NULL;
    int rest = 2;
    if (t->per_backend) {
        /* A backend CMake expects but the binary lacks must fail, never pass by doing nothing. */
        b = argc > 2 ? sw_backend_find(argv[2]) : NULL;
        if (!b) {
            fprintf(stderr,
                    "switch-tests: test %s needs a compiled-in backend, got '%s' (valid: %s)\n",
                    t->name, argc > 2 ? argv[2] : "", sw_backend_names());
            return 2;
        }
        rest = 3;
    }
    int rc = t->fn(b, argc - rest, argv + rest);
    if (rc == 0) printf("ok %s%s%s\n", t->name, b ? "/" : "", b ? b->name : "");
    return rc;
}
