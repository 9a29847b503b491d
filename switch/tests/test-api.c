/* test-api.c - the registry (names, lookup), stack allocation and sw_make's refusals. */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Is `name` one of the comma-separated names in `list`? */
static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0) return true;
        p += len + (p[len] == ',');
    }
    return false;
}

/* The backends CMake registered tests for (argv[0], comma separated) are exactly the compiled-in
 * ones, in any order: a backend that silently drops out of the build fails here, and so does
 * one CMake does not know about. */
int test_backends(const sw_backend *unused, int argc, char **argv)
{
    (void)unused;
    ASSERT_EQ(argc, 1);
    printf("expected by CMake: %s\ncompiled in: %s\n", argv[0], sw_backend_names());
    size_t expected = 0;
    for (const char *p = argv[0]; *p;) {
        size_t len = strcspn(p, ",");
        char name[64];
        ASSERT_LT(len, sizeof name);
        memcpy(name, p, len);
        name[len] = '\0';
        if (!sw_backend_find(name))
            check_fail(__FILE__, __LINE__, "backend %s is expected but not compiled in", name);
        expected++;
        p += len + (p[len] == ',');
    }
    for (size_t i = 0; i < sw_backend_count(); i++)
        if (!in_list(argv[0], sw_backend_at(i)->name))
            check_fail(__FILE__, __LINE__, "backend %s is compiled in but has no tests",
                       sw_backend_at(i)->name);
    ASSERT_EQ(expected, sw_backend_count());
    return 0;
}

static void check_registry(void)
{
    size_t n = sw_backend_count();
    ASSERT_GE(n, 1);
    ASSERT_PTR_EQ(sw_backend_at(n), NULL);
    char joined[256] = "";
    for (size_t i = 0; i < n; i++) {
        const sw_backend *b = sw_backend_at(i);
        ASSERT_PTR_NE(b, NULL);
        ASSERT(b->name && b->name[0]);
        ASSERT(b->summary && b->summary[0]);
        ASSERT(b->init_self && b->make && b->jump);
        ASSERT_PTR_EQ(sw_backend_find(b->name), b);
        for (size_t j = 0; j < i; j++)
            ASSERT_STR_NE(sw_backend_at(j)->name, b->name);
        if (i) strcat(joined, ", ");
        strcat(joined, b->name);
    }
    ASSERT_STR_EQ(sw_backend_names(), joined);
    ASSERT_PTR_NE(sw_backend_find("ucontext"), NULL);
    ASSERT_PTR_EQ(sw_backend_find("nope"), NULL);
    ASSERT_PTR_EQ(sw_backend_find(""), NULL);
    ASSERT_PTR_EQ(sw_backend_find(NULL), NULL);
}

/* Is the page at addr mapped with permissions `perms` ("---p", "rw-p")? */
static bool mapped_as(const void *addr, const char *perms)
{
    FILE *f = fopen("/proc/self/maps", "r");
    ASSERT_PTR_NE(f, NULL);
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char p[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) != 3) continue;
        found = (uintptr_t)addr >= lo && (uintptr_t)addr < hi && strcmp(p, perms) == 0;
    }
    fclose(f);
    return found;
}

static void check_stacks(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    sw_stack st;
    errno = 0;
    ASSERT_EQ(sw_stack_alloc(&st, 0), -1);
    ASSERT_EQ(errno, EINVAL);

    size_t asks[] = {1, SW_STACK_MIN, 64 * 1024 + 1};
    for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
        ASSERT_EQ(sw_stack_alloc(&st, asks[i]), 0);
        ASSERT_GE(st.size, asks[i]);
        ASSERT_GE(st.size, SW_STACK_MIN);
        ASSERT_EQ(st.size % page, 0);
        /* Rounded up to whole pages, not beyond. */
        ASSERT_LT(st.size, (asks[i] > SW_STACK_MIN ? asks[i] : SW_STACK_MIN) + page);
        /* One guard page directly below the usable part, which is writable to its top. */
        ASSERT_PTR_EQ((char *)st.map + page, st.base);
        ASSERT_EQ(st.map_size, st.size + page);
        ASSERT(mapped_as(st.map, "---p"));
        ASSERT(mapped_as(st.base, "rw-p"));
        ((volatile char *)st.base)[0] = 1;
        ((volatile char *)st.base)[st.size - 1] = 1;
        sw_stack_free(&st);
        ASSERT_PTR_EQ(st.map, NULL);
        sw_stack_free(&st); /* freeing twice is harmless */
    }
}

int test_api(const sw_backend *unused, int argc, char **argv)
{
    (void)unused, (void)argc, (void)argv;
    check_registry();
    check_stacks();
    return 0;
}

static void never_runs(void *arg)
{
    (void)arg;
    check_fail(__FILE__, __LINE__, "a context refused by sw_make ran");
}

#define ASSERT_EINVAL(call)                                                                        \
    do {                                                                                           \
        errno = 0;                                                                                 \
        ASSERT_EQ(call, -1);                                                                       \
        ASSERT_EQ(errno, EINVAL);                                                                  \
    } while (0)

int test_make_errors(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    sw_ctx self, ctx;
    sw_stack st;
    ASSERT_EINVAL(sw_init_self(NULL, b));
    ASSERT_EINVAL(sw_init_self(&self, NULL));
    ASSERT_EQ(sw_init_self(&self, b), 0);
    ASSERT_EQ(sw_stack_alloc(&st, 64 * 1024), 0);

    ASSERT_EINVAL(sw_make(&ctx, b, &st, never_runs, NULL, NULL));     /* no link */
    ASSERT_EINVAL(sw_make(&ctx, b, NULL, never_runs, NULL, &self));   /* no stack */
    ASSERT_EINVAL(sw_make(&ctx, NULL, &st, never_runs, NULL, &self)); /* no backend */
    ASSERT_EINVAL(sw_make(&ctx, b, &st, NULL, NULL, &self));          /* no entry */
    sw_stack small = st;
    small.size = SW_STACK_MIN - 1;
    ASSERT_EINVAL(sw_make(&ctx, b, &small, never_runs, NULL, &self));
    small.size = 4096;
    ASSERT_EINVAL(sw_make(&ctx, b, &small, never_runs, NULL, &self));
    sw_stack nobase = st;
    nobase.base = NULL;
    ASSERT_EINVAL(sw_make(&ctx, b, &nobase, never_runs, NULL, &self));

    /* The smallest accepted stack is accepted. */
    small.size = SW_STACK_MIN;
    ASSERT_EQ(sw_make(&ctx, b, &small, never_runs, NULL, &self), 0);
    ASSERT_EQ(ctx.state, SW_FRESH);
    ASSERT_PTR_EQ(ctx.backend, b);
    sw_stack_free(&st);
    return 0;
}
