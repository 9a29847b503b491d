/* server_main.c - echo-server's command line, start-up, and the statistics line at exit. */
#include "cli_args.h"
#include "json_print.h"
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define OPTIONS_LIST                                                                               \
    "--model, --switch, --sched, --engine, --read-policy, --io, --bind, --port, --threads, "       \
    "--procs, "                                                                                    \
    "--max-conns, --stack-size, --stack, --trigger, --touch-lines, --read-timeout, "               \
    "--idle-timeout, --timers, --poll-tick"

static bool any_model(const struct srv_model *m)
{
    (void)m;
    return true;
}

static bool available(const struct srv_model *m)
{
    return !m->missing;
}

static bool takes_procs(const struct srv_model *m)
{
    return !m->missing && m->procs_kind != SRV_PROCS_NONE;
}

static bool takes_threads(const struct srv_model *m)
{
    return !m->missing && m->takes_threads;
}

static bool takes_stack_size(const struct srv_model *m)
{
    return !m->missing && m->takes_stack_size;
}

static bool takes_fiber_flags(const struct srv_model *m)
{
    return !m->missing && m->takes_fiber_flags;
}

static bool takes_trigger(const struct srv_model *m)
{
    return !m->missing && m->takes_trigger;
}

static bool takes_touch_lines(const struct srv_model *m)
{
    return !m->missing && m->takes_touch_lines;
}

static bool takes_timeouts(const struct srv_model *m)
{
    return !m->missing && m->takes_timeouts;
}

/* The names of the models keep() accepts, comma separated, in the registry's order. */
static void model_names(char *buf, size_t len, bool (*keep)(const struct srv_model *))
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; srv_models[i] && used < len; i++) {
        if (!keep(srv_models[i])) continue;
        used +=
            (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", srv_models[i]->name);
    }
}

static void usage(FILE *f)
{
    char names[128];
    model_names(names, sizeof names, any_model);
    fprintf(f,
            "usage: echo-server --model MODEL [--switch NAME] [--sched star|ring]\n"
            "       [--engine NAME] [--read-policy eager|wait|adaptive] [--io direct|hooked]\n"
            "       [--bind 127.0.0.1] [--port 0] [--threads N] [--procs P] [--max-conns N]\n"
            "       [--stack-size BYTES]\n"
            "       [--stack guarded|copy[:K]] [--trigger edge|level] [--touch-lines N]\n"
            "       [--read-timeout MS] [--idle-timeout MS] [--timers NAME] [--poll-tick MS]\n"
            "       echo-server --list [--json]   (the compiled-in models)\n"
            "models: %s\n"
            "--procs P: P worker processes (fiber: each with its own SO_REUSEPORT listeners;\n"
            "prefork: all blocking in accept on one listener, one connection each)\n"
            "--touch-lines N (epoll, 0..64): a control; after each read the loop also walks N\n"
            "cache lines of a page of the connection's own, as a fiber's frames are on resume\n"
            "--read-timeout MS: close a connection whose read waits longer; --idle-timeout MS:\n"
            "close one that moves no byte for that long (both counted in the statistics)\n"
            "--timers NAME (fiber): the timer structure; --poll-tick MS (fiber): wait at most\n"
            "MS at a time, as a runtime with a fixed poll tick does\n",
            names);
}

#define bad(...) cli_bad("echo-server", __VA_ARGS__)

static long number(const char *flag, const char *s, long lo, long hi)
{
    return cli_long("echo-server", flag, s, lo, hi);
}

/*
 * An option given twice would leave the last one silently in force, and a value that is the
 * next option ("--model --port 0") would be taken as the value: both are refused.
 */
static void check_given(const char *name, bool *given, const char *value)
{
    if (*given) bad("--%s given twice", name);
    *given = true;
    if (value && strncmp(value, "--", 2) == 0) bad("--%s needs a value, not '%s'", name, value);
}

static void parse(int argc, char **argv, struct srv_options *o)
{
    static const struct option longs[] = {{"model", required_argument, 0, 'm'},
                                          {"switch", required_argument, 0, 'w'},
                                          {"sched", required_argument, 0, 's'},
                                          {"engine", required_argument, 0, 'e'},
                                          {"read-policy", required_argument, 0, 'r'},
                                          {"io", required_argument, 0, 'i'},
                                          {"bind", required_argument, 0, 'b'},
                                          {"port", required_argument, 0, 'p'},
                                          {"threads", required_argument, 0, 't'},
                                          {"procs", required_argument, 0, 'P'},
                                          {"max-conns", required_argument, 0, 'c'},
                                          {"stack-size", required_argument, 0, 'k'},
                                          {"stack", required_argument, 0, 'S'},
                                          {"trigger", required_argument, 0, 'T'},
                                          {"touch-lines", required_argument, 0, 'L'},
                                          {"read-timeout", required_argument, 0, 'R'},
                                          {"idle-timeout", required_argument, 0, 'I'},
                                          {"timers", required_argument, 0, 'M'},
                                          {"poll-tick", required_argument, 0, 'K'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    /* threads, procs: 0 until the model says; touch_lines: -1 until given */
    *o = (struct srv_options){.bind = "127.0.0.1", .touch_lines = -1};
    opterr = 0; /* our own one-line messages instead of getopt's */
    bool given[sizeof longs / sizeof longs[0]] = {false};
    for (int c, at = -1; (c = getopt_long(argc, argv, ":", longs, &at)) != -1; at = -1) {
        if (at >= 0) check_given(longs[at].name, &given[at], optarg);
        switch (c) {
        case 'm':
            o->model = optarg;
            break;
        case 'w':
            o->switch_name = optarg;
            break;
        case 's':
            o->sched = optarg;
            break;
        case 'e':
            o->engine = optarg;
            break;
        case 'r':
            o->read_policy = optarg;
            break;
        case 'i':
            o->io = optarg;
            break;
        case 'b':
            o->bind = optarg;
            break;
        case 'p':
            o->port = (int)number("--port", optarg, 0, 65535);
            break;
        case 't':
            o->threads = (int)number("--threads", optarg, 1, SRV_MAX_WORKERS);
            break;
        case 'P':
            o->procs = (int)number("--procs", optarg, 1, SRV_MAX_PROCS);
            break;
        case 'c':
            o->max_conns = number("--max-conns", optarg, 0, INT_MAX);
            break;
        case 'k':
            o->stack_size = (size_t)number("--stack-size", optarg, 1, 1L << 30);
            break;
        case 'S':
            o->stack = optarg;
            break;
        case 'T':
            o->trigger = optarg;
            break;
        case 'L': /* the lines of one page */
            o->touch_lines = (int)number("--touch-lines", optarg, 0, 64);
            break;
        case 'R': /* a day at most: the deadlines stay far from overflowing in ns */
            o->read_timeout_ms = number("--read-timeout", optarg, 1, 86400000);
            break;
        case 'I':
            o->idle_timeout_ms = number("--idle-timeout", optarg, 1, 86400000);
            break;
        case 'M':
            o->timers = optarg;
            break;
        case 'K':
            o->poll_tick_ms = number("--poll-tick", optarg, 1, 1000);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case ':':
            bad("%s needs a value", argv[optind - 1]);
        default:
            if (optopt) bad("unknown option '-%c' (valid: " OPTIONS_LIST ")", optopt);
            bad("unknown option '%s' (valid: " OPTIONS_LIST ")", argv[optind - 1]);
        }
    }
    if (optind < argc)
        bad("unexpected argument '%s' (valid options: " OPTIONS_LIST ")", argv[optind]);
    struct in_addr a;
    if (inet_pton(AF_INET, o->bind, &a) != 1)
        bad("--bind wants a dotted IPv4 address such as 127.0.0.1, not '%s'", o->bind);
    if (o->sched && strcmp(o->sched, "star") && strcmp(o->sched, "ring"))
        bad("unknown --sched '%s' (valid: star, ring)", o->sched);
    if (o->trigger && strcmp(o->trigger, "edge") && strcmp(o->trigger, "level"))
        bad("unknown --trigger '%s' (valid: edge, level)", o->trigger);
}

static const struct srv_model *choose_model(struct srv_options *o)
{
    char names[128], avail[128], why[256];
    model_names(names, sizeof names, any_model);
    model_names(avail, sizeof avail, available);
    if (!o->model) bad("--model is required (valid: %s)", names);
    const struct srv_model *m = srv_model_find(o->model);
    if (!m) bad("unknown model '%s' (valid: %s)", o->model, names);
    if (m->missing) bad("--model %s is %s (available here: %s)", m->name, m->missing, avail);
    if (!o->threads) o->threads = m->default_threads ? m->default_threads : 1;
    if (!o->procs) o->procs = m->default_procs ? m->default_procs : 1;
    /* Options the model does not declare are refused, naming the models that take them. */
    if ((o->switch_name || o->sched || o->engine || o->stack || o->read_policy || o->io ||
         o->timers || o->poll_tick_ms) &&
        !m->takes_fiber_flags) {
        model_names(why, sizeof why, takes_fiber_flags);
        bad("--switch, --sched, --engine, --stack, --read-policy, --io, --timers and --poll-tick "
            "apply only to --model %s",
            why);
    }
    if ((o->read_timeout_ms || o->idle_timeout_ms) && !m->takes_timeouts) {
        model_names(why, sizeof why, takes_timeouts);
        bad("--read-timeout and --idle-timeout apply only to --model %s", why);
    }
    if (o->trigger && !m->takes_trigger) {
        model_names(why, sizeof why, takes_trigger);
        bad("--trigger applies only to --model %s", why);
    }
    if (o->touch_lines >= 0 && !m->takes_touch_lines) {
        model_names(why, sizeof why, takes_touch_lines);
        bad("--touch-lines applies only to --model %s", why);
    }
    if (o->touch_lines < 0) o->touch_lines = 0; /* given or not, from here on a count */
    if (o->threads != 1 && !m->takes_threads) {
        model_names(why, sizeof why, takes_threads);
        bad("--threads applies only to --model %s", why);
    }
    if (o->stack_size && !m->takes_stack_size) {
        model_names(why, sizeof why, takes_stack_size);
        bad("--stack-size applies only to --model %s", why);
    }
    if (o->procs != 1 && m->procs_kind == SRV_PROCS_NONE) {
        model_names(why, sizeof why, takes_procs);
        bad("--procs applies only to --model %s", why);
    }
    long listeners = (long)o->threads * (m->procs_kind == SRV_PROCS_REUSEPORT ? o->procs : 1);
    if (m->per_thread_listener && listeners > SRV_MAX_THREADS)
        bad("--threads x --procs must be at most %d for --model %s (one listener each)",
            SRV_MAX_THREADS, m->name);
    if (m->check && m->check(o, why, sizeof why) < 0) bad("%s", why);
    return m;
}

static void json_str(FILE *f, const char *key, const char *v)
{
    fprintf(f, "\"%s\":", key);
    if (v)
        json_print_string(f, v);
    else
        fputs("null", f);
    fputc(',', f);
}

static void json_u64(FILE *f, const char *key, srv_counter *c)
{
    fprintf(f, "\"%s\":%llu,", key, (unsigned long long)atomic_load(c));
}

static double seconds(struct timeval a, struct timeval b)
{
    return (double)(a.tv_sec + b.tv_sec) + (double)(a.tv_usec + b.tv_usec) / 1e6;
}

/*
 * Resource use comes from getrusage. Children (the fork model's, all reaped by now) are
 * added for CPU time and context switches; for memory the kernel only keeps the largest
 * child's peak (RUSAGE_CHILDREN), so it is printed on its own, not summed: summing resident
 * memory over live children needs sampling /proc from outside, which the harness does.
 */
/*
 * The peak resident memory of this process image, from VmHWM. getrusage's ru_maxrss is no
 * good for that: Linux carries it across exec, so a server started by a large parent (the
 * Python sweep driver) would report the parent's peak. Falls back to ru_maxrss without /proc.
 */
static long peak_rss_kb(long fallback)
{
    FILE *st = fopen("/proc/self/status", "r");
    char line[256];
    long kb = fallback;
    while (st && fgets(line, sizeof line, st))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    if (st) fclose(st);
    return kb;
}

static void print_rusage(FILE *f, bool children)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    fprintf(f, "\"kernel_switches\":{\"voluntary\":%ld,\"involuntary\":%ld},",
            self.ru_nvcsw + kids.ru_nvcsw, self.ru_nivcsw + kids.ru_nivcsw);
    fprintf(f, "\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f,", seconds(self.ru_utime, kids.ru_utime),
            seconds(self.ru_stime, kids.ru_stime));
    fprintf(f, "\"rss_max_kb\":%ld,", peak_rss_kb(self.ru_maxrss));
    if (children)
        fprintf(f, "\"rss_max_kb_largest_child\":%ld}\n", kids.ru_maxrss);
    else
        fputs("\"rss_max_kb_largest_child\":null}\n", f);
}

/* Returns 0, or -1 with errno when the line could not be written. */
static int print_stats(FILE *f, const struct srv_options *o, struct srv_stats *st)
{
    const struct srv_model *m = srv_model_find(o->model);
    fputc('{', f);
    json_str(f, "model", o->model);
    json_str(f, "concurrency", srv_concurrency_name(m->concurrency));
    json_str(f, "switch", st->switch_name);
    json_str(f, "sched", st->sched);
    json_str(f, "engine", st->engine);
    json_str(f, "stack", st->stack);
    json_str(f, "read_policy", st->read_policy);
    json_str(f, "io", st->io);
    json_str(f, "timers", st->timers);
    if (m->takes_timeouts)
        fprintf(f, "\"timeouts\":{\"read_ms\":%ld,\"idle_ms\":%ld,\"read\":%llu,\"idle\":%llu},",
                o->read_timeout_ms, o->idle_timeout_ms,
                (unsigned long long)atomic_load(&st->read_timeouts),
                (unsigned long long)atomic_load(&st->idle_timeouts));
    else
        fputs("\"timeouts\":null,", f);
    if (m->takes_fiber_flags)
        fprintf(f, "\"poll_tick_ms\":%ld,", o->poll_tick_ms);
    else
        fputs("\"poll_tick_ms\":null,", f);
    if (m->takes_touch_lines)
        fprintf(f, "\"touch\":{\"lines\":%d,\"walked\":%llu},", o->touch_lines,
                (unsigned long long)atomic_load(&st->touch_walked));
    else
        fputs("\"touch\":null,", f);
    fprintf(f, "\"threads\":%d,\"procs\":%d,\"max_conns\":%ld,", o->threads, o->procs,
            o->max_conns);
    json_u64(f, "connections", &st->connections);
    json_u64(f, "max_concurrent", &st->max_concurrent);
    json_u64(f, "refused", &st->refused);
    json_u64(f, "shed", &st->shed);
    json_u64(f, "spawn_failed", &st->spawn_failed);
    json_u64(f, "accept_errors", &st->accept_errors);
    json_u64(f, "fd_exhausted", &st->fd_exhausted);
    json_u64(f, "bytes", &st->bytes);
    json_u64(f, "respawned", &st->respawned);
    if (st->epoll_counted)
        fprintf(f, "\"epoll_ctl\":{\"add\":%llu,\"mod\":%llu,\"del\":%llu},",
                (unsigned long long)st->epoll_add, (unsigned long long)st->epoll_mod,
                (unsigned long long)st->epoll_del);
    else
        fputs("\"epoll_ctl\":null,", f);
    if (st->kcalls_counted) {
        uint64_t ctl = st->epoll_add + st->epoll_mod + st->epoll_del;
        uint64_t total = ctl + st->epoll_waits + st->scan_calls + st->uring_enters;
        fprintf(f,
                "\"kernel_calls\":{\"epoll_ctl\":%llu,\"epoll_wait\":%llu,\"scan\":%llu,"
                "\"scan_fds\":%llu,\"io_uring_enter\":%llu,\"io_uring_sqes\":%llu,"
                "\"total\":%llu},",
                (unsigned long long)ctl, (unsigned long long)st->epoll_waits,
                (unsigned long long)st->scan_calls, (unsigned long long)st->scan_fds,
                (unsigned long long)st->uring_enters, (unsigned long long)st->uring_sqes,
                (unsigned long long)total);
    } else {
        fputs("\"kernel_calls\":null,", f);
    }
    if (st->switches_counted) {
        json_u64(f, "switches", &st->switches);
        json_u64(f, "stack_saves", &st->stack_saves);
        json_u64(f, "stack_restores", &st->stack_restores);
    } else {
        fputs("\"switches\":null,\"stack_saves\":null,\"stack_restores\":null,", f);
    }
    if (st->reads_counted)
        fprintf(f, "\"fiber_reads\":{\"tried\":%llu,\"again\":%llu,\"waited_first\":%llu},",
                (unsigned long long)st->reads_tried, (unsigned long long)st->reads_again,
                (unsigned long long)st->reads_waited_first);
    else
        fputs("\"fiber_reads\":null,", f);
    if (st->hooks_counted)
        fprintf(f, "\"hook\":{\"calls\":%llu,\"waits\":%llu},", (unsigned long long)st->hook_calls,
                (unsigned long long)st->hook_waits);
    else
        fputs("\"hook\":null,", f);
    print_rusage(f, st->children);
    errno = 0;
    if (fflush(f) == 0 && !ferror(f)) return 0;
    if (!errno) errno = EIO; /* an earlier write to f failed (the listening line) */
    return -1;
}

static const char *procs_kind_name(enum srv_procs_kind k)
{
    return k == SRV_PROCS_REUSEPORT ? "reuseport" : k == SRV_PROCS_SHARED ? "shared" : "none";
}

/* echo-server --list [--json]: the registry as the harness reads it (nothing is started). */
static int list_models(int argc, char **argv)
{
    bool json = argc == 3 && strcmp(argv[2], "--json") == 0;
    if (argc > 3 || (argc == 3 && !json)) bad("usage: echo-server --list [--json]");
    if (!json) {
        for (int i = 0; srv_models[i]; i++)
            if (!srv_models[i]->missing) printf("%s\n", srv_models[i]->name);
        return 0;
    }
    printf("{\"layer\": \"servers\", \"members\": [");
    const char *sep = "\n  {";
    for (int i = 0; srv_models[i]; i++) {
        const struct srv_model *m = srv_models[i];
        if (m->missing) continue;
        json_print_str_field(stdout, sep, "name", m->name);
        json_print_str_field(stdout, ", ", "summary", m->summary);
        json_print_str_field(stdout, ", \"props\": {", "concurrency",
                             srv_concurrency_name(m->concurrency));
        json_print_bool_field(stdout, ", ", "per_thread_listener", m->per_thread_listener);
        json_print_str_field(stdout, ", ", "procs", procs_kind_name(m->procs_kind));
        json_print_int_field(stdout, ", ", "default_threads",
                             m->default_threads ? m->default_threads : 1);
        json_print_int_field(stdout, ", ", "default_procs",
                             m->default_procs ? m->default_procs : 1);
        json_print_bool_field(stdout, ", ", "conn_holds_worker", m->conn_holds_worker);
        json_print_bool_field(stdout, ", ", "takes_threads", m->takes_threads);
        json_print_bool_field(stdout, ", ", "takes_stack_size", m->takes_stack_size);
        json_print_bool_field(stdout, ", ", "takes_fiber_flags", m->takes_fiber_flags);
        json_print_bool_field(stdout, ", ", "takes_trigger", m->takes_trigger);
        json_print_bool_field(stdout, ", ", "takes_touch_lines", m->takes_touch_lines);
        json_print_bool_field(stdout, ", ", "takes_timeouts", m->takes_timeouts);
        if (m->list_props) m->list_props(stdout);
        printf("}}");
        sep = ",\n  {";
    }
    printf("],\n \"left_out\": [");
    sep = "{";
    for (int i = 0; srv_models[i]; i++) {
        if (!srv_models[i]->missing) continue;
        json_print_str_field(stdout, sep, "name", srv_models[i]->name);
        json_print_str_field(stdout, ", ", "why", srv_models[i]->missing);
        printf("}");
        sep = ", {";
    }
    printf("]}\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--list") == 0) return list_models(argc, argv);
    struct srv_options opt;
    char why[256];
    parse(argc, argv, &opt);
    const struct srv_model *model = choose_model(&opt);
    struct in_addr any = {0};
    if (inet_pton(AF_INET, opt.bind, &any) == 1 && any.s_addr == htonl(INADDR_ANY))
        fprintf(stderr,
                "echo-server: --bind %s listens on every interface, not only "
                "loopback\n",
                opt.bind);

    /* Before any thread exists, so every thread (and child) inherits it. */
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGCHLD); /* the fork model takes it through a signalfd */
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    struct srv_stats *st =
        mmap(NULL, sizeof *st, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (st == MAP_FAILED) {
        perror("echo-server: mmap");
        return 1;
    }
    struct srv_server srv = {.opt = &opt, .stats = st, .ready_fd = -1};
    bool procs = model->procs_kind == SRV_PROCS_SHARED ||
                 (model->procs_kind == SRV_PROCS_REUSEPORT && opt.procs > 1);
    int listeners = !model->per_thread_listener                ? 1
                    : model->procs_kind == SRV_PROCS_REUSEPORT ? opt.threads * opt.procs
                                                               : opt.threads;
    int port = srv__open_listeners(&srv, listeners, why, sizeof why);
    /* Worker processes' parent takes SIGINT/SIGTERM itself (server_procs.c): no thread. */
    if (port < 0 || (!procs && srv__signals_start(&srv) != 0)) {
        fprintf(stderr, "echo-server: %s\n", port < 0 ? why : "cannot start signal thread");
        return 1;
    }
    srv.port = port;
    int rc = procs ? srv_run_procs(&srv, model) : model->run(&srv);
    if (!procs) srv__signals_end(&srv);
    srv__close_listeners(&srv);
    int printed = print_stats(stdout, &opt, st);
    munmap(st, sizeof *st);
    if (printed < 0) { /* the statistics are the run's result: lost, it failed */
        fprintf(stderr, "echo-server: cannot write the statistics line: %s\n", strerror(errno));
        return 1;
    }
    return rc == 0 ? 0 : 1;
}
