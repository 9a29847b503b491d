/* echo-load: command line, loopback-only checks, fd planning, worker processes, and the report. */
#define _GNU_SOURCE
#include "load.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* fds a process keeps for itself beyond its connections: stdio, epoll, pipes, git's popen. */
#define FD_MARGIN 64
#define MAX_PROCS 64

static const char *const valid_options =
    "--port --host --conns --size --duration --requests --mode --pipeline --rate "
    "--threads --procs "
    "--warmup --timeout --connect-timeout --max-time --ramp-timeout --chunk "
    "--chunk-delay "
    "--think --max-failed --seed --json --no-spread --agent --version --help";

static void usage(FILE *f)
{
    fprintf(f, "usage: echo-load --port P [--host 127.0.0.1] --conns N --size BYTES\n"
               "                 (--duration S | --requests N) [--mode "
               "pingpong|churn|slow]\n"
               "                 [--pipeline K] [--rate R] [--threads T] [--procs P] [--warmup S] "
               "[--timeout S]\n"
               "                 [--connect-timeout S] [--max-time S] [--ramp-timeout "
               "S]\n"
               "                 [--chunk BYTES] [--chunk-delay S] [--think S] [--max-failed F]\n"
               "                 [--seed N] [--json] [--no-spread] [--agent] [--version]\n"
               "Sends echo requests over loopback TCP and checks every byte that comes "
               "back.\n"
               "  --mode pingpong  persistent connections, one request in flight each "
               "(default)\n"
               "  --mode churn     connect, one request, close; --conns of them at a "
               "time\n"
               "  --pipeline K     pingpong: keep K requests in flight on each connection (sent\n"
               "                   back to back, each verified byte by byte as it returns; a new\n"
               "                   one leaves as soon as one completes); closed loop only\n"
               "  --mode slow      persistent connections whose requests go out in "
               "--chunk\n"
               "                   bytes (default 16) every --chunk-delay s (default "
               "0.02),\n"
               "                   --think s (default 0.5) between requests: slow "
               "clients made\n"
               "                   by the sender, not by the network\n"
               "  --ramp-timeout S persistent modes: first connect every connection and "
               "echo\n"
               "                   once on each (the ramp-up, reported on its own), "
               "then warm\n"
               "                   up and measure; S caps the ramp-up (default 60, 0: "
               "none)\n"
               "  --rate R         open loop: R requests/s in total on a fixed "
               "schedule; latency\n"
               "                   is measured from each request's due time (and, "
               "beside it,\n"
               "                   from when it was sent: the 'uncorrected' figure)\n"
               "  --threads T      worker threads per process (default 1)\n"
               "  --procs P        worker processes (default: as many as the fd limit "
               "needs)\n"
               "  --warmup S       seconds run first and left out of the figures "
               "(default 0.5)\n"
               "  --timeout S      seconds a request may take (default 5)\n"
               "  --max-time S     hard cap on the run after the ramp-up (default: "
               "warm-up +\n"
               "                   duration + timeout + 5, or 300 with --requests)\n"
               "  --connect-timeout S  seconds a connect may take (default 5)\n"
               "  --max-failed F   share of the measured requests that may fail or never\n"
               "                   complete before the exit status is 4 (default 0.01)\n"
               "  --seed N         payload stream seed (default: from the clock; in "
               "--json)\n"
               "  --json           print one JSON object instead of the summary\n"
               "  --no-spread      let the kernel pick the source address instead of\n"
               "                   spreading connections over 127.0.0.2-254\n"
               "  --agent          a load host's share of a coordinated run (run.sh --load-host):\n"
               "                   --host may be any address; after the ramp-up it prints\n"
               "                   'ready' on stdout and starts its warm-up and window on a\n"
               "                   'start' line on stdin; the next line, or the end of stdin,\n"
               "                   ends the window (as --duration does, whichever is first);\n"
               "                   stdin ending before 'start' stops it (exit 3)\n"
               "  --version        the agent protocol, histogram layout and git commit\n"
               "  --host accepts loopback addresses only (127.0.0.0/8, ::1, "
               "localhost) but with --agent;\n"
               "  --size accepts K, M and G suffixes (powers of 1024).\n"
               "Exit status: 0 ok, 1 a byte came back wrong or a connection closed or reset\n"
               "early, 2 bad usage, 3 nothing measured, the run could not be set up, the\n"
               "hard time cap stopped it first, or no connect succeeded for --connect-timeout,\n"
               "4 more than --max-failed of the measured requests failed (connect errors,\n"
               "timeouts) or never completed, 5 the report could not be written to standard\n"
               "output (a full disk, a closed pipe), 130 / 143 stopped by SIGINT / SIGTERM\n"
               "(the report then says what was measured).\n");
}

/* Exit status when the report (or --help) could not be written: the run's outcome is lost. */
#define EXIT_UNWRITTEN 5

/*
 * Everything echo-load prints goes through stdio's buffer, so a full disk or a closed pipe shows
 * only when it is flushed: flush and close stdout, and say so when that fails.
 */
static int close_stdout(const char *what)
{
    bool failed = ferror(stdout) != 0; /* a write already failed while printing */
    int err = errno;
    if (fflush(stdout) != 0) {
        failed = true;
        err = errno;
    }
    if (fclose(stdout) != 0 && !failed) {
        failed = true;
        err = errno;
    }
    if (!failed) return 0;
    fprintf(stderr, "echo-load: could not write the %s to standard output: %s\n", what,
            strerror(err ? err : EIO));
    return -1;
}

static _Noreturn void bad(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "echo-load: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(2);
}

static double parse_double(const char *opt, const char *v, double lo, double hi)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    /* Decimal only, as the integer options: strtod also takes hex ("0x10" is 16), "inf",
     * leading blanks and a sign, none of which a duration or rate is written with (every
     * range here starts at 0 or above). */
    bool decimal =
        v[strspn(v, "0123456789.eE+-")] == '\0' && (isdigit((unsigned char)v[0]) || v[0] == '.');
    if (!decimal || errno || end == v || *end || !isfinite(d) || d < lo || d > hi) {
        char range[96];
        snprintf(range, sizeof(range), "a number from %g to %g", lo, hi);
        bad("%s must be %s", opt, range);
    }
    return d;
}

static uint64_t parse_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi, bool suffix)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    /* Digits only before any suffix: strtoull also skips blanks and takes a sign. */
    bool digits = end != v && (size_t)(end - v) == strspn(v, "0123456789");
    uint64_t mult = 1;
    if (suffix && end != v && *end && !end[1]) {
        const char *units = "KMG";
        const char *u = strchr(units, *end & ~0x20);
        if (u) {
            mult = UINT64_C(1) << (10 * (u - units + 1));
            end++;
        }
    }
    if (!digits || errno || *end || n > hi / mult || n * mult < lo) {
        char range[96];
        snprintf(range, sizeof(range), "a whole number from %llu to %llu%s", (unsigned long long)lo,
                 (unsigned long long)hi, suffix ? " (K, M, G suffixes allowed)" : "");
        bad("%s must be %s", opt, range);
    }
    return n * mult;
}

/* Loopback only, unless an agent of a run from load hosts (--agent), which the user set up. */
static void parse_host(struct ld_config *c, const char *h)
{
    const char *want = c->agent ? "an IPv4 or IPv6 address"
                                : "a loopback address "
                                  "(127.0.0.0/8 or ::1)";
    if (strlen(h) >= sizeof(c->host)) bad("--host must be %s; got '%s'", want, h);
    const char *lit = strcmp(h, "localhost") == 0 ? "127.0.0.1" : h;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&c->addr;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&c->addr;
    memset(&c->addr, 0, sizeof(c->addr));
    bool loopback = false;
    if (inet_pton(AF_INET, lit, &a4->sin_addr) == 1) {
        loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
        a4->sin_family = AF_INET;
        c->addrlen = sizeof(*a4);
    } else if (inet_pton(AF_INET6, lit, &a6->sin6_addr) == 1) {
        loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
        a6->sin6_family = AF_INET6;
        c->addrlen = sizeof(*a6);
    }
    if (!c->addrlen || (!loopback && !c->agent)) bad("--host must be %s; got '%s'", want, h);
    /* Source addresses 127.0.0.2-254 reach only a server on this machine. */
    if (!loopback) c->spread = false;
    snprintf(c->host, sizeof(c->host), "%s", lit);
}

static void set_port(struct ld_config *c)
{
    if (c->addr.ss_family == AF_INET)
        ((struct sockaddr_in *)&c->addr)->sin_port = htons((uint16_t)c->port);
    else
        ((struct sockaddr_in6 *)&c->addr)->sin6_port = htons((uint16_t)c->port);
}

static const struct option long_opts[] = {{"port", required_argument, 0, 'p'},
                                          {"host", required_argument, 0, 'H'},
                                          {"conns", required_argument, 0, 'c'},
                                          {"size", required_argument, 0, 's'},
                                          {"duration", required_argument, 0, 'd'},
                                          {"requests", required_argument, 0, 'n'},
                                          {"mode", required_argument, 0, 'm'},
                                          {"rate", required_argument, 0, 'r'},
                                          {"pipeline", required_argument, 0, 'I'},
                                          {"threads", required_argument, 0, 't'},
                                          {"procs", required_argument, 0, 'P'},
                                          {"warmup", required_argument, 0, 'w'},
                                          {"timeout", required_argument, 0, 'T'},
                                          {"connect-timeout", required_argument, 0, 'C'},
                                          {"max-time", required_argument, 0, 'M'},
                                          {"max-failed", required_argument, 0, 'F'},
                                          {"seed", required_argument, 0, 'S'},
                                          {"ramp-timeout", required_argument, 0, 'R'},
                                          {"chunk", required_argument, 0, 'k'},
                                          {"chunk-delay", required_argument, 0, 'D'},
                                          {"think", required_argument, 0, 'K'},
                                          {"json", no_argument, 0, 'j'},
                                          {"no-spread", no_argument, 0, 'N'},
                                          {"agent", no_argument, 0, 'A'},
                                          {"version", no_argument, 0, 'V'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};

static void apply_option(struct ld_config *c, int opt, const char *v)
{
    switch (opt) {
    case 'p':
        c->port = (int)parse_u64("--port", v, 1, 65535, false);
        break;
    case 'H': /* parsed once --agent is known: see parse_args */
        break;
    case 'c':
        c->conns = (unsigned)parse_u64("--conns", v, 1, 1000000, false);
        break;
    case 's':
        c->size = parse_u64("--size", v, 1, UINT64_C(1) << 30, true);
        break;
    case 'd':
        c->duration = parse_double("--duration", v, 0.001, 86400);
        break;
    case 'n':
        c->requests = parse_u64("--requests", v, 1, UINT64_C(1) << 40, false);
        break;
    case 'r':
        c->rate = parse_double("--rate", v, 0.001, 1e8);
        break;
    case 'I':
        c->pipeline = (unsigned)parse_u64("--pipeline", v, 1, 1024, false);
        break;
    case 't':
        c->threads = (unsigned)parse_u64("--threads", v, 1, 256, false);
        break;
    case 'P':
        c->procs = (unsigned)parse_u64("--procs", v, 1, MAX_PROCS, false);
        break;
    case 'w':
        c->warmup = parse_double("--warmup", v, 0, 3600);
        break;
    case 'T':
        c->timeout = parse_double("--timeout", v, 0.001, 3600);
        break;
    case 'C':
        c->connect_timeout = parse_double("--connect-timeout", v, 0.001, 3600);
        break;
    case 'M':
        c->max_time = parse_double("--max-time", v, 0.01, 86400);
        break;
    case 'F':
        c->max_failed = parse_double("--max-failed", v, 0, 1);
        break;
    case 'S':
        c->seed = parse_u64("--seed", v, 0, UINT64_MAX, false);
        break;
    case 'R':
        c->ramp_timeout = parse_double("--ramp-timeout", v, 0, 3600);
        break;
    case 'k':
        c->chunk = parse_u64("--chunk", v, 1, UINT64_C(1) << 30, true);
        break;
    case 'D':
        c->chunk_delay = parse_double("--chunk-delay", v, 0, 60);
        break;
    case 'K':
        c->think = parse_double("--think", v, 0, 3600);
        break;
    case 'j':
        c->json = true;
        break;
    case 'N':
        c->spread = false;
        break;
    case 'A':
        c->agent = true;
        break;
    case 'm':
        if (strcmp(v, "pingpong") == 0)
            c->mode = LD_PINGPONG;
        else if (strcmp(v, "churn") == 0)
            c->mode = LD_CHURN;
        else if (strcmp(v, "slow") == 0)
            c->mode = LD_SLOW;
        else
            bad("--mode must be one of: pingpong, churn, slow (got '%s')%s", v, "");
        break;
    }
}

/* Slow mode's flags: only with --mode slow, never with --rate, and a request must be able to finish
 * sending within --timeout. Defaults are filled in here (-1 / 0 mean "not given"). */
static void check_slow(struct ld_config *c)
{
    bool given = c->chunk || c->chunk_delay >= 0 || c->think >= 0;
    if (c->mode != LD_SLOW) {
        if (given) bad("--chunk, --chunk-delay and --think apply only to --mode slow%s%s", "", "");
        c->chunk_delay = c->think = 0;
        return;
    }
    if (c->rate > 0)
        bad("--rate does not combine with --mode slow (--think paces its "
            "requests)%s%s",
            "", "");
    if (!c->chunk) c->chunk = 16;
    if (c->chunk_delay < 0) c->chunk_delay = 0.02;
    if (c->think < 0) c->think = 0.5;
    double chunks = ceil((double)c->size / (double)c->chunk);
    if ((chunks - 1) * c->chunk_delay >= c->timeout) {
        char why[160];
        snprintf(why, sizeof(why), "sending one request takes %.3g s (%.0f chunks, %.3g s apart)",
                 (chunks - 1) * c->chunk_delay, chunks, c->chunk_delay);
        bad("--timeout must exceed the time a slow request takes to send: %s%s", why, "");
    }
}

static void parse_args(struct ld_config *c, int argc, char **argv)
{
    *c = (struct ld_config){.threads = 1,
                            .pipeline = 1,
                            .warmup = 0.5,
                            .timeout = 5,
                            .max_failed = 0.01,
                            .connect_timeout = 5,
                            .spread = true,
                            .ramp_timeout = 60,
                            .chunk_delay = -1,
                            .think = -1,
                            .mode = LD_PINGPONG};
    c->seed = (uint64_t)ld_now_ns() ^ ((uint64_t)getpid() << 32);
    opterr = 0;
    int opt;
    const char *host = "127.0.0.1";
    while ((opt = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
        if (opt == 'h' || opt == 'V') {
            if (opt == 'h')
                usage(stdout);
            else
                ld_print_version();
            exit(close_stdout(opt == 'h' ? "help" : "version") == 0 ? 0 : EXIT_UNWRITTEN);
        }
        if (opt == 'H') host = optarg;
        if (opt == ':')
            bad("option %s needs a value (valid options: %s)", argv[optind - 1], valid_options);
        if (opt == '?')
            bad("unknown option '%s' (valid options: %s)", argv[optind - 1], valid_options);
        apply_option(c, opt, optarg);
    }
    if (optind < argc)
        bad("unexpected argument '%s' (valid options: %s)", argv[optind], valid_options);
    if (!c->port || !c->conns || !c->size)
        bad("--port, --conns and --size are required (see --help)%s%s", "", "");
    if ((c->duration > 0) == (c->requests > 0))
        bad("give exactly one of --duration S or --requests N%s%s", "", "");
    check_slow(c);
    parse_host(c, host);
    if (c->agent && (c->duration == 0 || !ld_ramp_applies(c)))
        bad("--agent needs --duration and a ramp-up (--mode pingpong or slow, --ramp-timeout above "
            "0)%s%s",
            "", "");
    if (c->pipeline > 1 && (c->mode != LD_PINGPONG || c->rate > 0))
        bad("--pipeline applies only to --mode pingpong without --rate%s%s", "", "");
    set_port(c);
    if (c->max_time == 0)
        c->max_time = c->duration > 0 ? c->warmup + c->duration + c->timeout + 5 : 300;
}

/* Raises the soft fd limit to the hard one and decides how many processes the fds require. */
static void plan_processes(struct ld_config *c)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    uint64_t budget = rl.rlim_cur > FD_MARGIN + 1 ? rl.rlim_cur - FD_MARGIN : 1;
    unsigned need = (unsigned)((c->conns + budget - 1) / budget);
    if (c->procs == 0) c->procs = need;
    if (need > MAX_PROCS || c->procs < need) {
        char why[200];
        snprintf(why, sizeof(why),
                 "%u connections need at least %u processes of %llu fds each "
                 "(RLIMIT_NOFILE %llu), "
                 "and --procs must be from that to %d",
                 c->conns, need, (unsigned long long)budget, (unsigned long long)rl.rlim_cur,
                 MAX_PROCS);
        bad("%s%s", why, "");
    }
    if (c->procs > c->conns) c->procs = c->conns;
    if (c->threads > (c->conns + c->procs - 1) / c->procs)
        c->threads = (c->conns + c->procs - 1) / c->procs;
}

static struct ld_sync *run_sync;

static struct ld_share share_of(const struct ld_config *c, unsigned p, int64_t t0)
{
    unsigned first = (unsigned)((uint64_t)c->conns * p / c->procs);
    unsigned upto = (unsigned)((uint64_t)c->conns * (p + 1) / c->procs);
    struct ld_share s = {.conns = upto - first, .slot_base = first, .t0 = t0, .sync = run_sync};
    s.threads = c->threads < s.conns ? c->threads : s.conns;
    s.requests = c->requests * upto / c->conns - c->requests * first / c->conns;
    s.rate = c->rate * s.conns / c->conns;
    return s;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "echo-load: hard time cap exceeded; aborting\n";
    ssize_t k = write(2, msg, sizeof(msg) - 1);
    (void)k;
    _exit(3);
}

/* The worker processes this process forked (none in a worker process itself). */
static pid_t child_pids[MAX_PROCS];
static volatile sig_atomic_t nchildren;

/*
 * SIGINT and SIGTERM ask every worker of every process to stop (the flag is in shared memory,
 * so a signal to the parent alone reaches the children): the run ends with a partial report of
 * what it measured. A signal to the process group reaches every process at once, so "second" is
 * counted per process: only a second signal to the same process ends it at once, and the parent
 * then takes its worker processes with it.
 */
static void on_stop_signal(int sig)
{
    static volatile sig_atomic_t seen;
    if (seen++) {
        for (sig_atomic_t i = 0; i < nchildren; i++)
            kill(child_pids[i], SIGKILL);
        _exit(128 + sig);
    }
    int none = 0;
    atomic_compare_exchange_strong(&run_sync->stop, &none, sig);
}

static void catch_stop_signals(void)
{
    struct sigaction sa = {.sa_handler = on_stop_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* The workers stop themselves at --max-time; this alarm only catches a hang beyond that. */
static void arm_watchdog(const struct ld_config *c)
{
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, NULL);
    alarm((unsigned)ceil(c->max_time + c->ramp_timeout) + 10);
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Above one process's fd budget, each child runs its share and sends back its result. */
static int run_children(const struct ld_config *c, struct ld_result *total)
{
    static struct ld_result part;
    int fds[MAX_PROCS];
    int64_t t0 = ld_now_ns() + 20000000LL + 5000000LL * c->procs; /* all forked by then */
    unsigned forked = 0;
    for (; forked < c->procs; forked++) {
        int pfd[2];
        if (pipe(pfd) < 0) break;
        pid_t pid = fork();
        if (pid < 0) {
            close(pfd[0]);
            close(pfd[1]);
            break;
        }
        if (pid == 0) {
            nchildren = 0;
            close(pfd[0]);
            arm_watchdog(c);
            struct ld_share s = share_of(c, forked, t0);
            int rc = ld_run_process(c, &s, &part);
            _exit(rc == 0 && write_all(pfd[1], &part, sizeof(part)) == 0 ? 0 : 3);
        }
        close(pfd[1]);
        fds[forked] = pfd[0];
        child_pids[forked] = pid;
        nchildren = (sig_atomic_t)(forked + 1);
    }
    int rc = forked == c->procs ? 0 : -1;
    if (rc == 0 && c->agent && ld_agent_start(run_sync) != 0) rc = -1;
    ld_result_init(total);
    for (unsigned i = 0; i < forked; i++) {
        if (read_all(fds[i], &part, sizeof(part)) == 0)
            ld_result_merge(total, &part);
        else
            rc = -1;
        close(fds[i]);
        int st;
        while (waitpid(child_pids[i], &st, 0) < 0 && errno == EINTR)
            ;
    }
    return rc;
}

int main(int argc, char **argv)
{
    static struct ld_config cfg;
    static struct ld_result res;
    parse_args(&cfg, argc, argv);
    plan_processes(&cfg);
    signal(SIGPIPE, SIG_IGN);
    arm_watchdog(&cfg);
    /* Shared before the worker processes fork: the ramp-up ends for all of them at once. */
    run_sync =
        mmap(NULL, sizeof(*run_sync), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (run_sync == MAP_FAILED) {
        perror("echo-load: mmap");
        return 3;
    }
    for (unsigned p = 0; p < cfg.procs; p++)
        run_sync->workers += share_of(&cfg, p, 0).threads;
    run_sync->barrier = cfg.agent;
    catch_stop_signals();
    int rc;
    if (cfg.procs == 1) {
        if (cfg.agent && ld_agent_start(run_sync) != 0) return 3;
        struct ld_share s = share_of(&cfg, 0, ld_now_ns());
        rc = ld_run_process(&cfg, &s, &res);
    } else {
        rc = run_children(&cfg, &res);
    }
    if (rc != 0) {
        fprintf(stderr, "echo-load: could not set up or finish all workers: %s\n", strerror(errno));
        return 3;
    }
    int stop = atomic_load(&run_sync->stop);
    if (stop == LD_STOP_GAVE_UP)
        fprintf(stderr,
                "echo-load: gave up: no connection to %s:%d succeeded for %.1f s (%s; is a server "
                "listening there? --connect-timeout sets how long to try)\n",
                cfg.host, cfg.port, res.gave_up_after, ld_error_names[res.gave_up_error]);
    if (stop == LD_STOP_BAD_ECHO)
        fprintf(stderr,
                "echo-load: stopped: the first echo on connection %llu failed twice, on fresh "
                "connections (%s): the server at %s:%d does not echo what it is sent\n",
                (unsigned long long)res.bad_echo_slot, ld_error_names[res.bad_echo_error], cfg.host,
                cfg.port);
    if (stop == LD_STOP_NO_START)
        fprintf(stderr, "echo-load: stopped: standard input ended (or said something else) before "
                        "the start line: the coordinator went away\n");
    res.stopped = stop;
    res.ready_ns = atomic_load(&run_sync->done_ns);
    res.start_ns = atomic_load(&run_sync->started_ns);
    res.stop_ns = atomic_load(&run_sync->stop_ns);
    errno = 0;
    if (cfg.json)
        ld_report_json(&cfg, &res);
    else
        ld_report_human(&cfg, &res);
    if (close_stdout("report") != 0) return EXIT_UNWRITTEN;
    return stop > 0 ? 128 + stop : ld_exit_status(&cfg, &res);
}
