/* timer_info.c - lists the compiled-in timer structures and what each declares about itself. */
#include "json_print.h"
#include "timer.h"

#include <stdio.h>
#include <string.h>

/* The registry as the harness reads it. */
static void list_json(void)
{
    printf("{\"layer\": \"timers\", \"members\": [");
    for (size_t i = 0; i < tm_count(); i++) {
        const tm_ops *t = tm_at(i);
        const tm_props *p = &t->props;
        json_print_str_field(stdout, i ? ",\n  {" : "\n  {", "name", t->name);
        json_print_str_field(stdout, ", ", "summary", t->summary);
        json_print_bool_field(stdout, ", \"props\": {", "exact", p->exact);
        json_print_int_field(stdout, ", ", "granularity_ns", (long)p->granularity_ns);
        printf(", \"max_rel_error\": %.4g", p->max_rel_error);
        json_print_bool_field(stdout, ", ", "fifo", p->fifo);
        json_print_str_field(stdout, ", ", "arm", p->arm);
        json_print_str_field(stdout, ", ", "cancel", p->cancel);
        json_print_str_field(stdout, ", ", "expire", p->expire);
        printf("}}");
    }
    printf("]}\n");
}

static void table(void)
{
    printf("%-7s %-6s %-8s %-7s %-5s %-9s %-9s %-9s %s\n", "timers", "exact", "gran-ms", "rel-err",
           "fifo", "arm", "cancel", "expire", "summary");
    for (size_t i = 0; i < tm_count(); i++) {
        const tm_ops *t = tm_at(i);
        const tm_props *p = &t->props;
        printf("%-7s %-6s %-8g %-7.3g %-5s %-9s %-9s %-9s %s\n", t->name, p->exact ? "yes" : "no",
               (double)p->granularity_ns / 1e6, p->max_rel_error, p->fifo ? "yes" : "no", p->arm,
               p->cancel, p->expire, t->summary);
    }
}

int main(int argc, char **argv)
{
    if (argc == 1) {
        table();
        return 0;
    }
    if (strcmp(argv[1], "--list") != 0 || argc > 3 || (argc == 3 && strcmp(argv[2], "--json"))) {
        fprintf(stderr, "usage: timer-info [--list [--json]]\n");
        return 2;
    }
    if (argc == 3) {
        list_json();
        return 0;
    }
    for (size_t i = 0; i < tm_count(); i++)
        printf("%s\n", tm_at(i)->name);
    return 0;
}
