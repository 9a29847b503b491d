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

/* The names are C identifiers with '-', so they need no JSON escaping. */
static void list_tests_json(void)
{
    printf("{\"tests\": [");
    for (size_t i = 0; i < NTESTS; i++)
        printf("%s{\"name\": \"%s\", \"per_backend\": %s}", i ? ", " : "", tests[i].name,
               tests[i].per_backend ? "true" : "false");
    printf("]}\n");
}

static void list_backends(bool json)
{
    if (json) printf("{\"backends\": [");
    for (size_t i = 0; i < sw_backend_count(); i++) {
        const char *name = sw_backend_at(i)->name;
        if (json)
            printf("%s\"%s\"", i ? ", " : "", name);
        else
            printf("%s\n", name);
    }
    if (json) printf("]}\n");
}

/* --list and --list-backends, each with an optional --json; anything else after them is a
 * usage error, so a flag the program does not know is never silently ignored. */
static int list_command(int argc, char **argv)
{
    bool json = argc == 3 && strcmp(argv[2], "--json") == 0;
    if (argc > 3 || (argc == 3 && !json)) {
        fprintf(stderr, "switch-tests: %s takes only --json, got '%s'\n", argv[1], argv[2]);
        return 2;
    }
    if (strcmp(argv[1], "--list-backends") == 0) {
        list_backends(json);
    } else if (json) {
        list_tests_json();
    } else {
        list_tests(stdout, "\n");
        printf("\n");
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: switch-tests TEST [BACKEND] [ARGS...] | --list [--json] | "
                        "--list-backends [--json]\n");
        return 2;
    }
    if (strcmp(argv[1], "--list") == 0 || strcmp(argv[1], "--list-backends") == 0)
        return list_command(argc, argv);
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
