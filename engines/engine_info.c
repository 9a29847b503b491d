/* engine_info.c - lists the compiled-in event engines and what each declares about itself. */
#include "engine.h"
#include "json_print.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *interest_name(enum eng_interest i)
{
    return i == ENG_INTEREST_KERNEL     ? "kernel"
           : i == ENG_INTEREST_FD_LIST  ? "fd-list"
           : i == ENG_INTEREST_FD_RANGE ? "fd-range"
                                        : "?";
}

/* The registry as the harness reads it. A count the engine does not declare is null. */
static void list_json(void)
{
    printf("{\"layer\": \"engines\", \"members\": [");
    for (size_t i = 0; i < eng_count(); i++) {
        const eng_ops *e = eng_at(i);
        const eng_props *p = &e->props;
        json_print_str_field(stdout, i ? ",\n  {" : "\n  {", "name", e->name);
        json_print_str_field(stdout, ", ", "summary", e->summary);
        json_print_int_field(stdout, ", ", "fd_limit", e->fd_limit);
        /* The kernel mechanism, from an instance: null where the kernel refuses the engine. */
        void *st = e->init();
        if (st) {
            json_print_str_field(stdout, ", ", "method", e->method(st));
            e->free(st);
        } else {
            printf(", \"method\": null");
        }
        json_print_str_field(stdout, ", \"props\": {", "interest", interest_name(p->interest));
        if (p->interest_calls_per_wait == ENG_UNDECLARED) {
            printf(", \"interest_calls_per_wait\": null, \"interest_calls_first_use\": null");
        } else {
            json_print_int_field(stdout, ", ", "interest_calls_per_wait",
                                 p->interest_calls_per_wait);
            json_print_int_field(stdout, ", ", "interest_calls_first_use",
                                 p->interest_calls_first_use);
        }
        json_print_bool_field(stdout, ", ", "reports_hup_err", p->reports_hup_err);
        json_print_bool_field(stdout, ", ", "edge_triggered", p->edge_triggered);
        json_print_bool_field(stdout, ", ", "completion", p->completion);
        printf("}}");
    }
    printf("]}\n");
}

static void table(void)
{
    printf("%-11s %-9s %-9s %-8s %-5s %-10s %s\n", "engine", "interest", "calls/wt", "hup/err",
           "edge", "completion", "summary");
    for (size_t i = 0; i < eng_count(); i++) {
        const eng_ops *e = eng_at(i);
        const eng_props *p = &e->props;
        char calls[16] = "-";
        if (p->interest_calls_per_wait != ENG_UNDECLARED)
            snprintf(calls, sizeof calls, "%d", p->interest_calls_per_wait);
        printf("%-11s %-9s %-9s %-8s %-5s %-10s %s\n", e->name, interest_name(p->interest), calls,
               p->reports_hup_err ? "yes" : "no", p->edge_triggered ? "yes" : "no",
               p->completion ? "yes" : "no", e->summary);
    }
}

int main(int argc, char **argv)
{
    if (argc == 1) {
        table();
        return 0;
    }
    if (strcmp(argv[1], "--list") != 0 || argc > 3 || (argc == 3 && strcmp(argv[2], "--json"))) {
        fprintf(stderr, "usage: engine-info [--list [--json]]\n");
        return 2;
    }
    if (argc == 3) {
        list_json();
        return 0;
    }
    for (size_t i = 0; i < eng_count(); i++)
        printf("%s\n", eng_at(i)->name);
    return 0;
}
