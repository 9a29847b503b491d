/* switch_info.c - lists the compiled-in switch backends, their properties, and a live check. */
#include "json_print.h"
#include "switch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 1000 };

struct pingpong {
    sw_ctx self, peer;
    long value;
};

static void count_up(void *arg)
{
    struct pingpong *pp = arg;
    for (int i = 0; i < ROUNDS; i++) {
        pp->value++;
        sw_jump(&pp->peer, &pp->self);
    }
}

/* Hand control back and forth ROUNDS times; returns 0 when every hop arrived. */
static int live_check(const sw_backend *b)
{
    struct pingpong pp = {.value = 0};
    sw_stack st;
    if (sw_stack_alloc(&st, 64 * 1024) != 0) return -1;
    int ok =
        sw_init_self(&pp.self, b) == 0 && sw_make(&pp.peer, b, &st, count_up, &pp, &pp.self) == 0;
    for (int i = 0; ok && i <= ROUNDS; i++) {
        sw_jump(&pp.self, &pp.peer);
        ok = pp.value == (i < ROUNDS ? i + 1 : ROUNDS);
    }
    ok = ok && sw_finished(&pp.peer);
    sw_stack_free(&st);
    return ok ? 0 : -1;
}

/* The registry as the harness reads it: every backend with its declared properties, and the
 * stack modes. Nothing is run. */
static void list_json(void)
{
    printf("{\"layer\": \"switch\", \"members\": [");
    for (size_t i = 0; i < sw_backend_count(); i++) {
        const sw_backend *b = sw_backend_at(i);
        json_print_str_field(stdout, i ? ",\n  {" : "\n  {", "name", b->name);
        json_print_str_field(stdout, ", ", "summary", b->summary);
        json_print_bool_field(stdout, ", \"props\": {", "keeps_fp_control",
                              b->props.keeps_fp_control);
        json_print_bool_field(stdout, ", ", "switches_sigmask", b->props.switches_sigmask);
        json_print_bool_field(stdout, ", ", "enters_kernel", b->props.enters_kernel);
        json_print_bool_field(stdout, ", ", "copy_stack", b->props.copy_stack);
        json_print_bool_field(stdout, ", ", "signs_resume", b->props.signs_resume);
        json_print_bool_field(stdout, ", ", "shadow_stack", b->props.shadow_stack);
        printf("}}");
    }
    const char *why_not;
    bool shstk = sw_shadow_stack_enabled(&why_not);
    printf("],\n \"shadow_stack\": {");
    json_print_bool_field(stdout, "", "enabled", shstk);
    json_print_str_field(stdout, ", ", "why_not", shstk ? "" : why_not);
    printf("},\n \"left_out\": [");
    const char *why, *name;
    for (size_t i = 0; (name = sw_backend_left_out(i, &why)) != NULL; i++) {
        json_print_str_field(stdout, i ? ",\n  {" : "\n  {", "name", name);
        json_print_str_field(stdout, ", ", "why", why);
        printf("}");
    }
    printf("],\n \"stack_modes\": [");
    for (size_t i = 0; i < sw_stack_mode_count(); i++) {
        const sw_stack_mode *m = sw_stack_mode_at(i);
        json_print_str_field(stdout, i ? ",\n  {" : "\n  {", "name", m->name);
        json_print_str_field(stdout, ", ", "summary", m->summary);
        json_print_bool_field(stdout, ", ", "shares_stack", m->shares_stack);
        printf("}");
    }
    printf("]}\n");
}

static int usage(void)
{
    fprintf(stderr, "usage: switch-info [--list [--json]]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "--list") != 0 || argc > 3) return usage();
        if (argc == 3 && strcmp(argv[2], "--json") != 0) return usage();
        if (argc == 3) {
            list_json();
            return 0;
        }
        for (size_t i = 0; i < sw_backend_count(); i++)
            printf("%s\n", sw_backend_at(i)->name);
        return 0;
    }
    printf("%-10s %-8s %-8s %-8s %-6s %-6s %-7s %s\n", "backend", "fp-state", "sigmask", "syscall",
           "copy", "shstk", "check", "summary");
    int failures = 0;
    for (size_t i = 0; i < sw_backend_count(); i++) {
        const sw_backend *b = sw_backend_at(i);
        /* A backend refused under this process's shadow stack is not run: it would fault. */
        bool refused = sw_backend_refusal(b) != NULL;
        int rc = refused ? 0 : live_check(b);
        failures += rc != 0;
        printf("%-10s %-8s %-8s %-8s %-6s %-6s %-7s %s\n", b->name,
               b->props.keeps_fp_control ? "kept" : "shared",
               b->props.switches_sigmask ? "per-ctx" : "shared",
               b->props.enters_kernel ? "yes" : "no", b->props.copy_stack ? "yes" : "no",
               b->props.shadow_stack ? "yes" : "no",
               refused   ? "refused"
               : rc == 0 ? "ok"
                         : "FAILED",
               b->summary);
    }
    const char *why, *name;
    for (size_t i = 0; (name = sw_backend_left_out(i, &why)) != NULL; i++)
        printf("%-10s not built: %s\n", name, why);
    const char *why_not;
    if (sw_shadow_stack_enabled(&why_not))
        printf("shadow stack: enabled in this process; backends without shstk are refused\n");
    else
        printf("shadow stack: not enabled: %s\n", why_not);
    int guard = sw_overflow_guard_init();
    failures += guard != 0;
    printf("overflow guard: %s\n",
           guard == 0 ? "installed (SIGSEGV/SIGBUS handler, alternate stack)" : "FAILED");
    return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
