/* echo-load's results: merging, the machine description, and the human and JSON reports. */
#define _GNU_SOURCE
#include "load.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef SWITCHYARD_SOURCE_DIR
#define SWITCHYARD_SOURCE_DIR "."
#endif

/* A worker busier than this is treated as having had a whole core to itself and used it up. */
#define SATURATED_CORE 0.95

const char *const ld_error_names[LD_ERR_KINDS] = {
    "connect_failed", "connect_timeout", "addr_unavailable",
    "fd_exhausted",   "timeout",         "early_close",
    "reset",          "mismatch",        "io"};

bool ld_error_is_fatal(enum ld_error e)
{
    return e == LD_ERR_EARLY_CLOSE || e == LD_ERR_RESET || e == LD_ERR_MISMATCH;
}

void ld_result_init(struct ld_result *r)
{
    memset(r, 0, sizeof(*r));
    ld_hist_init(&r->lat);
    ld_hist_init(&r->lat_unc);
    ld_hist_init(&r->lag);
    ld_hist_init(&r->ramp.connect);
    ld_hist_init(&r->ramp.first_echo);
}

bool ld_ramp_applies(const struct ld_config *cfg)
{
    return cfg->mode != LD_CHURN && cfg->ramp_timeout > 0;
}

static int64_t later(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

void ld_ramp_merge(struct ld_ramp *d, const struct ld_ramp *s)
{
    d->ran |= s->ran;
    d->connects += s->connects;
    d->ready += s->ready;
    d->unfinished += s->unfinished;
    d->last_connect = later(d->last_connect, s->last_connect);
    d->last_ready = later(d->last_ready, s->last_ready);
    d->done = later(d->done, s->done);
    if (!d->t0) d->t0 = s->t0;
    for (int i = 0; i < LD_ERR_KINDS; i++)
        d->errors[i] += s->errors[i];
    ld_hist_merge(&d->connect, &s->connect);
    ld_hist_merge(&d->first_echo, &s->first_echo);
}

void ld_result_merge(struct ld_result *d, const struct ld_result *s)
{
    d->requests += s->requests;
    d->bytes += s->bytes;
    d->bytes_all += s->bytes_all;
    d->window_ns = later(d->window_ns, s->window_ns);
    d->unfinished += s->unfinished;
    d->connects += s->connects;
    for (int i = 0; i < LD_ERR_KINDS; i++)
        d->errors[i] += s->errors[i];
    for (int i = 0; i < LD_MM_KINDS; i++)
        d->mismatch_kinds[i] += s->mismatch_kinds[i];
    if (!d->first_mismatch.seen) d->first_mismatch = s->first_mismatch;
    if (s->seconds > d->seconds) d->seconds = s->seconds;
    d->cpu_user += s->cpu_user;
    d->cpu_sys += s->cpu_sys;
    d->cores += s->cores;
    if (s->max_thread_core > d->max_thread_core) d->max_thread_core = s->max_thread_core;
    d->workers += s->workers;
    d->capped |= s->capped;
    if (s->bad_echo && !d->bad_echo) {
        d->bad_echo = true;
        d->bad_echo_error = s->bad_echo_error;
        d->bad_echo_slot = s->bad_echo_slot;
    }
    if (s->gave_up_after > d->gave_up_after) {
        d->gave_up_after = s->gave_up_after;
        d->gave_up_error = s->gave_up_error;
    }
    ld_hist_merge(&d->lat, &s->lat);
    ld_hist_merge(&d->lat_unc, &s->lat_unc);
    ld_hist_merge(&d->lag, &s->lag);
    ld_ramp_merge(&d->ramp, &s->ramp);
}

static uint64_t sum_errors(const uint64_t *e)
{
    uint64_t n = 0;
    for (int i = 0; i < LD_ERR_KINDS; i++)
        n += e[i];
    return n;
}

/* Measured requests that failed (any error after the ramp-up) or never completed. */
static uint64_t failed_requests(const struct ld_result *r)
{
    return sum_errors(r->errors) + r->unfinished;
}

int ld_exit_status(const struct ld_config *c, const struct ld_result *r)
{
    for (int i = 0; i < LD_ERR_KINDS; i++)
        if ((r->errors[i] || r->ramp.errors[i]) && ld_error_is_fatal((enum ld_error)i)) return 1;
    if (r->requests == 0 || r->capped || r->stopped == LD_STOP_GAVE_UP) return 3;
    uint64_t failed = failed_requests(r);
    return (double)failed > c->max_failed * (double)(r->requests + failed) ? 4 : 0;
}

/* ---- the machine ---------------------------------------------------------------------- */

struct meta {
    char host[256], cpu[256], kernel[256], pinning[256], git[64], date[32];
    long cores;
    int pinned_cpus;
};

static void read_cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(out, n, "%s", colon + 2);
            out[strcspn(out, "\n")] = 0;
            break;
        }
    }
    fclose(f);
}

/* The CPUs this process may run on, as a list like "0-1" or "1": that is the pinning. */
static int read_pinning(char *out, size_t n)
{
    cpu_set_t set;
    out[0] = 0;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        snprintf(out, n, "unknown");
        return 0;
    }
    size_t len = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set) || (c > 0 && CPU_ISSET(c - 1, &set))) continue;
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set))
            end++;
        int k = end > c ? snprintf(out + len, n - len, "%s%d-%d", len ? "," : "", c, end)
                        : snprintf(out + len, n - len, "%s%d", len ? "," : "", c);
        if (k < 0 || (size_t)k >= n - len) break;
        len += (size_t)k;
    }
    return CPU_COUNT(&set);
}

static void read_git_sha(char *out, size_t n)
{
    const char *env = getenv("SWITCHYARD_GIT_SHA");
    snprintf(out, n, "%s", env && *env ? env : "unknown");
    if (env && *env) return;
    FILE *p =
        popen("git -C '" SWITCHYARD_SOURCE_DIR "' rev-parse --short=12 HEAD 2>/dev/null", "r");
    if (!p) return;
    char line[64];
    if (fgets(line, sizeof(line), p) && line[0] != '\n') {
        line[strcspn(line, "\n")] = 0;
        snprintf(out, n, "%s", line);
    }
    pclose(p);
}

static void collect_meta(struct meta *m)
{
    struct utsname u;
    memset(m, 0, sizeof(*m));
    if (uname(&u) == 0) {
        snprintf(m->host, sizeof(m->host), "%s", u.nodename);
        snprintf(m->kernel, sizeof(m->kernel), "%s %s", u.sysname, u.release);
    }
    read_cpu_model(m->cpu, sizeof(m->cpu));
    m->cores = sysconf(_SC_NPROCESSORS_ONLN);
    m->pinned_cpus = read_pinning(m->pinning, sizeof(m->pinning));
    read_git_sha(m->git, sizeof(m->git));
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(m->date, sizeof(m->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- shared figures ------------------------------------------------------------------- */

static const char *mode_name(const struct ld_config *c)
{
    return c->mode == LD_CHURN ? "churn" : c->mode == LD_SLOW ? "slow" : "pingpong";
}

/* Seconds from the start of the run to t (0 when t never happened). */
static double since_start(const struct ld_ramp *rp, int64_t t)
{
    return t > rp->t0 ? (double)(t - rp->t0) / 1e9 : 0;
}

static double rps(const struct ld_result *r)
{
    return r->seconds > 0 ? (double)r->requests / r->seconds : 0;
}

static double cores_used(const struct ld_result *r)
{
    return r->cores;
}

static uint64_t total_errors(const struct ld_result *r)
{
    return sum_errors(r->errors);
}

/*
 * Saturated: one worker used its whole core, or all workers together used every CPU echo-load
 * may run on (several threads pinned to one CPU never show a busy worker on their own).
 */
static bool saturated(const struct ld_result *r)
{
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
    double usable = cpus > 0 && (unsigned)cpus < r->workers ? (double)cpus : (double)r->workers;
    return r->max_thread_core >= SATURATED_CORE ||
           (usable > 0 && cores_used(r) >= SATURATED_CORE * usable);
}

/* Warnings shared by both reports; returns how many were written into w. */
/* One slot for each warning below, which can all be raised at once. */
#define MAX_WARNINGS 10

static const char *stop_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

static int warnings(const struct ld_config *c, const struct ld_result *r, char w[][256])
{
    int n = 0;
    if (saturated(r))
        snprintf(w[n++], 256,
                 "echo-load saturated its CPU (%.2f cores used, busiest worker "
                 "%.2f of a core): "
                 "these figures may measure the load generator, not the server",
                 cores_used(r), r->max_thread_core);
    if (c->rate > 0 && c->duration > 0 && rps(r) < 0.95 * c->rate)
        snprintf(w[n++], 256,
                 "achieved %.0f of the %.0f requests/s asked: the schedule fell "
                 "behind, and "
                 "latency counts from the due times",
                 rps(r), c->rate);
    if (r->unfinished)
        snprintf(w[n++], 256, "%llu measured requests never completed",
                 (unsigned long long)r->unfinished);
    if (r->requests == 0) snprintf(w[n++], 256, "no request completed in the measured window");
    if (r->ramp.unfinished)
        snprintf(w[n++], 256,
                 "%llu connections had not echoed once when the ramp-up ended "
                 "(--ramp-timeout "
                 "%.6g s); they went on trying in the window",
                 (unsigned long long)r->ramp.unfinished, c->ramp_timeout);
    if (r->stopped == LD_STOP_GAVE_UP)
        snprintf(w[n++], 256,
                 "gave up: no connect succeeded for %.1f s (%s); the figures are partial",
                 r->gave_up_after, ld_error_names[r->gave_up_error]);
    else if (r->stopped == LD_STOP_BAD_ECHO)
        snprintf(w[n++], 256,
                 "stopped in the ramp-up: the first echo on connection %llu failed twice (%s); "
                 "the figures are partial",
                 (unsigned long long)r->bad_echo_slot, ld_error_names[r->bad_echo_error]);
    else if (r->stopped == LD_STOP_NO_START)
        snprintf(w[n++], 256, "stopped: standard input ended before the start line");
    else if (r->stopped > 0)
        snprintf(w[n++], 256, "stopped by %s: the figures are partial, up to the signal",
                 stop_signal_name(r->stopped));
    if (r->capped)
        snprintf(w[n++], 256,
                 "stopped by the hard time cap (--max-time %.6g s) before the work "
                 "asked for "
                 "was done",
                 c->max_time);
    return n;
}

/*
 * What a coordinator checks before it runs agents of one run on several hosts: the agent
 * protocol (load_agent.c), the histogram layout the merge needs equal, and the commit.
 */
#define LD_AGENT_PROTOCOL 1

void ld_print_version(void)
{
    char git[64];
    read_git_sha(git, sizeof(git));
    printf("echo-load agent-protocol %d histogram log-linear/%u/%u git %s\n", LD_AGENT_PROTOCOL,
           LD_HIST_SUB_BITS, LD_HIST_TOP_BITS, git);
}

/* ---- human report --------------------------------------------------------------------- */

static void human_latency(const char *label, const struct ld_hist *h)
{
    printf("  %-11s p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  (us, "
           "%llu samples)\n",
           label, ld_hist_percentile(h, 50) / 1e3, ld_hist_percentile(h, 90) / 1e3,
           ld_hist_percentile(h, 99) / 1e3, ld_hist_percentile(h, 99.9) / 1e3, (double)h->max / 1e3,
           (unsigned long long)h->count);
}

void ld_report_human(const struct ld_config *c, const struct ld_result *r)
{
    struct meta m;
    collect_meta(&m);
    printf("machine: %s, %s, %ld cores, %s, pinned to CPUs %s, git %s\n", m.host, m.cpu, m.cores,
           m.kernel, m.pinning, m.git);
    printf("echo-load: %s, %u conns x %llu B to %s:%d, ", mode_name(c), c->conns,
           (unsigned long long)c->size, c->host, c->port);
    if (c->duration > 0)
        printf("%.3g s", c->duration);
    else
        printf("%llu requests", (unsigned long long)c->requests);
    printf(" after %.3g s warm-up, %u process(es) x %u thread(s)", c->warmup, c->procs, c->threads);
    if (c->rate > 0) printf(", open loop at %.0f req/s", c->rate);
    if (c->pipeline > 1) printf(", %u in flight per connection", c->pipeline);
    if (c->mode == LD_SLOW)
        printf(", %llu B chunks %.3g s apart, %.3g s think time", (unsigned long long)c->chunk,
               c->chunk_delay, c->think);
    const struct ld_ramp *rp = &r->ramp;
    if (rp->ran) {
        printf("\n  ramp-up     %llu of %u connections echoed once in %.3f s (all "
               "connected "
               "after %.3f s); connect p50 %.1f p99 %.1f us, first echo p50 %.1f "
               "p99 %.1f us; "
               "errors",
               (unsigned long long)rp->ready, c->conns, since_start(rp, rp->done),
               since_start(rp, rp->last_connect), ld_hist_percentile(&rp->connect, 50) / 1e3,
               ld_hist_percentile(&rp->connect, 99) / 1e3,
               ld_hist_percentile(&rp->first_echo, 50) / 1e3,
               ld_hist_percentile(&rp->first_echo, 99) / 1e3);
        if (sum_errors(rp->errors) == 0) printf(" none");
        for (int i = 0; i < LD_ERR_KINDS; i++)
            if (rp->errors[i])
                printf(" %s=%llu", ld_error_names[i], (unsigned long long)rp->errors[i]);
    }
    printf("\n  requests    %llu in %.3f s = %.0f req/s, %llu bytes echoed and "
           "verified\n",
           (unsigned long long)r->requests, r->seconds, rps(r), (unsigned long long)r->bytes);
    human_latency(c->rate > 0 ? "corrected" : "latency", &r->lat);
    if (c->rate > 0) {
        human_latency("uncorrected", &r->lat_unc);
        human_latency("send lag", &r->lag);
    }
    printf("  errors     %s", rp->ran ? "(after the ramp-up)" : "");
    if (total_errors(r) == 0) printf(" none");
    for (int i = 0; i < LD_ERR_KINDS; i++)
        if (r->errors[i]) printf(" %s=%llu", ld_error_names[i], (unsigned long long)r->errors[i]);
    printf("\n");
    if (r->first_mismatch.seen)
        printf("  first mismatch: %s at byte %llu of slot %llu (expected 0x%02x, "
               "got 0x%02x)\n",
               ld_mismatch_names[r->first_mismatch.kind],
               (unsigned long long)r->first_mismatch.offset,
               (unsigned long long)r->first_mismatch.slot, r->first_mismatch.expected,
               r->first_mismatch.got);
    printf("  cpu         %.2f cores (user %.2f s, sys %.2f s over %u workers, "
           "busiest %.2f)\n",
           cores_used(r), r->cpu_user, r->cpu_sys, r->workers, r->max_thread_core);
    char w[MAX_WARNINGS][256];
    int nw = warnings(c, r, w);
    for (int i = 0; i < nw; i++)
        printf("  WARNING: %s\n", w[i]);
}

/* ---- JSON report ---------------------------------------------------------------------- */

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void json_latency(const struct ld_hist *h)
{
    printf("\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f,"
           "\"min\":%.3f,"
           "\"mean\":%.3f,\"samples\":%llu",
           ld_hist_percentile(h, 50) / 1e3, ld_hist_percentile(h, 90) / 1e3,
           ld_hist_percentile(h, 99) / 1e3, ld_hist_percentile(h, 99.9) / 1e3,
           h->count ? (double)h->max / 1e3 : 0.0, h->count ? (double)h->min / 1e3 : 0.0,
           ld_hist_mean(h) / 1e3, (unsigned long long)h->count);
}

static void json_config(const struct ld_config *c)
{
    printf("\"config\":{\"host\":");
    json_str(c->host);
    printf(",\"port\":%d,\"conns\":%u,\"size\":%llu,\"mode\":\"%s\",", c->port, c->conns,
           (unsigned long long)c->size, mode_name(c));
    if (c->duration > 0)
        printf("\"duration\":%.6g,\"requests\":null,", c->duration);
    else
        printf("\"duration\":null,\"requests\":%llu,", (unsigned long long)c->requests);
    if (c->rate > 0)
        printf("\"rate\":%.6g,", c->rate);
    else
        printf("\"rate\":null,");
    printf("\"pipeline\":%u,", c->pipeline);
    printf("\"threads\":%u,\"procs\":%u,\"warmup\":%.6g,\"timeout\":%.6g,"
           "\"connect_timeout\":%.6g,\"max_failed\":%.6g,"
           "\"max_time\":%.6g,\"ramp_timeout\":%.6g,\"seed\":%llu,\"spread_"
           "sources\":%s",
           c->threads, c->procs, c->warmup, c->timeout, c->connect_timeout, c->max_failed,
           c->max_time, c->ramp_timeout, (unsigned long long)c->seed, c->spread ? "true" : "false");
    printf(",\"agent\":%s", c->agent ? "true" : "false");
    if (c->mode == LD_SLOW)
        printf(",\"chunk\":%llu,\"chunk_delay\":%.6g,\"think\":%.6g", (unsigned long long)c->chunk,
               c->chunk_delay, c->think);
    putchar('}');
}

static void json_meta(void)
{
    struct meta m;
    collect_meta(&m);
    printf("\"meta\":{\"host\":");
    json_str(m.host);
    printf(",\"cpu_model\":");
    json_str(m.cpu);
    printf(",\"cores\":%ld,\"kernel\":", m.cores);
    json_str(m.kernel);
    printf(",\"pinning\":");
    json_str(m.pinning);
    printf(",\"pinned_cpus\":%d,\"git_sha\":", m.pinned_cpus);
    json_str(m.git);
    printf(",\"date\":\"%s\"}", m.date);
}

static void json_error_counts(const uint64_t *e)
{
    putchar('{');
    for (int i = 0; i < LD_ERR_KINDS; i++)
        printf("%s\"%s\":%llu", i ? "," : "", ld_error_names[i], (unsigned long long)e[i]);
    putchar('}');
}

/* The ramp-up block: null when the run had none (churn, or --ramp-timeout 0). */
static void json_ramp(const struct ld_config *c, const struct ld_ramp *rp)
{
    if (!rp->ran) {
        printf("\"ramp_up\":null,");
        return;
    }
    printf("\"ramp_up\":{\"conns\":%u,\"connects\":%llu,\"ready\":%llu,"
           "\"unfinished\":%llu,"
           "\"complete\":%s,\"seconds\":%.6f,\"all_connected_s\":%.6f,\"all_"
           "echoed_s\":%.6f,"
           "\"connect_latency_us\":{",
           c->conns, (unsigned long long)rp->connects, (unsigned long long)rp->ready,
           (unsigned long long)rp->unfinished, rp->unfinished ? "false" : "true",
           since_start(rp, rp->done), since_start(rp, rp->last_connect),
           since_start(rp, rp->last_ready));
    json_latency(&rp->connect);
    printf("},\"first_echo_latency_us\":{");
    json_latency(&rp->first_echo);
    printf("},\"errors\":");
    json_error_counts(rp->errors);
    printf(",\"errors_total\":%llu},", (unsigned long long)sum_errors(rp->errors));
}

static void json_errors(const struct ld_result *r)
{
    printf("\"errors\":");
    json_error_counts(r->errors);
    printf(",\"errors_total\":%llu", (unsigned long long)total_errors(r));
    printf(",\"mismatches\":%llu,\"mismatch_kinds\":{",
           (unsigned long long)r->errors[LD_ERR_MISMATCH]);
    for (int i = 0; i < LD_MM_KINDS; i++)
        printf("%s\"%s\":%llu", i ? "," : "", ld_mismatch_names[i],
               (unsigned long long)r->mismatch_kinds[i]);
    printf("},\"first_mismatch\":");
    const struct ld_mismatch_info *f = &r->first_mismatch;
    if (f->seen)
        printf("{\"kind\":\"%s\",\"slot\":%llu,\"offset\":%llu,\"expected\":%u,"
               "\"got\":%u}",
               ld_mismatch_names[f->kind], (unsigned long long)f->slot,
               (unsigned long long)f->offset, f->expected, f->got);
    else
        printf("null");
}

void ld_report_json(const struct ld_config *c, const struct ld_result *r)
{
    printf("{\"tool\":\"echo-load\",");
    json_config(c);
    putchar(',');
    json_meta();
    printf(",\"requests\":%llu,\"seconds\":%.6f,\"requests_per_sec\":%.3f,"
           "\"bytes\":%llu,\"bytes_all\":%llu,"
           "\"unfinished\":%llu,\"connects\":%llu,",
           (unsigned long long)r->requests, r->seconds, rps(r), (unsigned long long)r->bytes,
           (unsigned long long)r->bytes_all, (unsigned long long)r->unfinished,
           (unsigned long long)r->connects);
    printf("\"latency_us\":{\"from\":\"%s\",", c->rate > 0 ? "due time" : "send");
    json_latency(&r->lat);
    if (c->agent) { /* in ns, for merging the histograms of several load hosts */
        printf(",\"histogram\":");
        fflush(stdout);
        ld_hist_json(stdout, &r->lat);
    }
    if (c->rate > 0) {
        printf(",\"uncorrected\":{");
        json_latency(&r->lat_unc);
        /* The part of the corrected figure that is echo-load's own doing or a busy connection:
         * timer wake-up delay plus waiting for a free connection. */
        printf("},\"send_lag\":{");
        json_latency(&r->lag);
        putchar('}');
    }
    printf("},");
    json_ramp(c, &r->ramp);
    if (c->agent)
        printf("\"agent\":{\"ready_ns\":%lld,\"start_ns\":%lld,\"stop_ns\":%lld,"
               "\"window_ns\":%lld},",
               (long long)r->ready_ns, (long long)r->start_ns, (long long)r->stop_ns,
               (long long)r->window_ns);
    json_errors(r);
    printf(",\"cpu\":{\"user_s\":%.4f,\"sys_s\":%.4f,\"cores_used\":%.4f,"
           "\"busiest_worker_core\":%.4f,\"workers\":%u,\"saturated\":%s},",
           r->cpu_user, r->cpu_sys, cores_used(r), r->max_thread_core, r->workers,
           saturated(r) ? "true" : "false");
    char w[MAX_WARNINGS][256];
    int nw = warnings(c, r, w);
    printf("\"warnings\":[");
    for (int i = 0; i < nw; i++) {
        if (i) putchar(',');
        json_str(w[i]);
    }
    printf("],\"capped\":%s,\"partial\":%s,\"stopped_by\":", r->capped ? "true" : "false",
           r->stopped ? "true" : "false");
    if (r->stopped == LD_STOP_GAVE_UP)
        json_str("gave up");
    else if (r->stopped == LD_STOP_BAD_ECHO)
        json_str("bad echo");
    else if (r->stopped == LD_STOP_NO_START)
        json_str("no start");
    else if (r->stopped > 0)
        json_str(stop_signal_name(r->stopped));
    else
        printf("null");
    printf(",\"exit_status\":%d}\n", r->stopped > 0 ? 128 + r->stopped : ld_exit_status(c, r));
}
