/* test-io-kernel.c - test-io's cases on the kernel calls an engine makes: the pattern per wait
 * it declares, and its own counts against the kernel's tracepoints under perf. */
#define _GNU_SOURCE
#include "test-io.h"

#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- ctl workload: ping-pong over TCP, the pattern the echo server produces --------------- */

enum { PP_CONNS = 4, PP_ROUNDS = 100 };
static int pp_listener;
static struct sockaddr_in pp_addr;

static void pp_session(void *arg)
{
    int c = (int)(intptr_t)arg;
    char buf[256]; /* larger than a request, as the echo server's is */
    ssize_t r;
    while ((r = fb_read(c, buf, sizeof buf)) > 0)
        ASSERT_EQ(fb_write(c, buf, (size_t)r), r);
    fb_close(c);
}

static void pp_acceptor(void *arg)
{
    (void)arg;
    for (int i = 0; i < PP_CONNS; i++) {
        int c = fb_accept(pp_listener, NULL, NULL);
        ASSERT_GE(c, 0);
        spawn(pp_session, (void *)(intptr_t)c);
    }
}

static void pp_client(void *arg)
{
    /* in is larger than a reply, as a real client's buffer is: each reply is a short read. */
    char out[64], in[256];
    (void)arg;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ASSERT_EQ(fb_connect(s, (struct sockaddr *)&pp_addr, sizeof pp_addr, 1000 * MS), 0);
    for (int k = 0; k < PP_ROUNDS; k++) {
        memset(out, 'a' + k % 26, sizeof out);
        ASSERT_EQ(fb_write(s, out, sizeof out), (ssize_t)sizeof out);
        size_t n = 0;
        while (n < sizeof out) {
            ssize_t r = fb_read_timeout(s, in + n, sizeof in - n, 2000 * MS);
            ASSERT_GE(r, 1);
            n += (size_t)r;
        }
        ASSERT_EQ(n, sizeof out);
        ASSERT_EQ(memcmp(in, out, sizeof out), 0);
    }
    fb_close(s);
}

static fb_io_stats pp_stats;

static bool pp_engine_completion(void)
{
    return eng_find(engine_name)->props.completion;
}

static eng_stats pp_run(void)
{
    pp_listener = tcp_listener(&pp_addr);
    start(0);
    spawn(pp_acceptor, NULL);
    for (int i = 0; i < PP_CONNS; i++)
        spawn(pp_client, NULL);
    run_all();
    fb_close(pp_listener);
    fb_io_get_stats(io, &pp_stats);
    finish();
    return pp_stats.engine;
}

static void print_kernel_calls(const eng_stats *st)
{
    printf("%s: %llu waits, %llu polls; epoll_ctl add %llu mod %llu del %llu, epoll_wait %llu, "
           "scans %llu (%llu fds), io_uring_enter %llu (%llu SQEs)%s\n",
           engine_name, (unsigned long long)st->waits, (unsigned long long)st->polls,
           (unsigned long long)st->ctl_add, (unsigned long long)st->ctl_mod,
           (unsigned long long)st->ctl_del, (unsigned long long)st->epoll_waits,
           (unsigned long long)st->scan_calls, (unsigned long long)st->scan_fds,
           (unsigned long long)st->uring_enters, (unsigned long long)st->uring_sqes,
           st->ctl_source == ENG_CTL_NONE ? " (not counted)" : "");
}

/* The kernel-call pattern per wait on a ping-pong (claim C3 and the engines' designs). */
void t_ctl_pattern(void)
{
    eng_stats st = pp_run();
    uint64_t ctl = st.ctl_add + st.ctl_mod + st.ctl_del;
    print_kernel_calls(&st);
    /* Every round trip parks each side at least once. */
    ASSERT_GE(st.waits, PP_CONNS * PP_ROUNDS);
    /* The read policy's effect. Eager: every server read after a reply finds the queue empty
     * (the client runs only once the server parks), so at least one EAGAIN per round trip.
     * Adaptive and wait: a reply is always a short read, so the next read waits first and
     * finds data; EAGAIN is left only where readiness was stale (an edge engine's ready bit
     * or the first accept), a few per connection, not one per request. The first read on
     * each fd tries first (nothing is known about it yet). */
    printf("%s: reads tried %llu, EAGAIN %llu, waited first %llu\n",
           fb_read_policy_name(read_policy), (unsigned long long)pp_stats.reads_tried,
           (unsigned long long)pp_stats.reads_again,
           (unsigned long long)pp_stats.reads_waited_first);
    if (pp_engine_completion()) {
        /* A completion engine submits each read: no readiness, so no policy and no EAGAIN. */
        ASSERT_EQ(pp_stats.reads_again, 0);
        ASSERT_EQ(pp_stats.reads_waited_first, 0);
    } else if (read_policy == FB_READ_EAGER) {
        ASSERT_GE(pp_stats.reads_again, PP_CONNS * PP_ROUNDS);
        ASSERT_EQ(pp_stats.reads_waited_first, 0);
    } else {
        ASSERT_LE(pp_stats.reads_again, 4 * PP_CONNS + 4);
        ASSERT_GE(pp_stats.reads_waited_first, 2 * PP_CONNS * (PP_ROUNDS - 1));
    }
    uint64_t fds = 2 * PP_CONNS + 1;
    const eng_props *p = &eng_find(engine_name)->props;
    if (p->interest != ENG_INTEREST_KERNEL) {
        /* Nothing registered: one scan per poll, blocking or not, each passing >= 1 fd. */
        ASSERT_EQ(ctl + st.epoll_waits + st.uring_enters, 0);
        ASSERT_EQ(st.scan_calls, st.polls);
        ASSERT_GE(st.scan_fds, st.scan_calls);
    }
    if (p->interest_calls_per_wait == ENG_UNDECLARED) {
        if (st.ctl_source == ENG_CTL_NONE)
            printf("%s: kernel calls not counted\n", engine_name);
        else
            ASSERT_GE(ctl, 1);
        return;
    }
    /* Interest calls grow with the waits exactly as declared; beyond that, only per fd
     * (registration, a re-registration after interest was dropped, removal at close: at most
     * two per direction). A poll enters the kernel at most once. */
    uint64_t interest = ctl + st.uring_sqes, per_wait = (uint64_t)p->interest_calls_per_wait;
    ASSERT_GE(interest, per_wait * st.waits);
    ASSERT_LE(interest, per_wait * st.waits + 4 * fds);
    ASSERT_LE(st.epoll_waits + st.scan_calls + st.uring_enters, st.polls);
}

/*
 * The engine's counts against the kernel's: this process re-runs itself as the ping-pong
 * workload under `perf stat` on the syscall tracepoints of every kernel call an engine may
 * make (and io_uring's per-request submit tracepoint), the workload prints its engine's
 * counts, and each family must be equal.
 */
void t_ctl_workload(void)
{
    eng_stats st = pp_run();
    printf("engine %llu %llu %llu %llu %llu %llu %llu %d\n",
           (unsigned long long)(st.ctl_add + st.ctl_mod + st.ctl_del),
           (unsigned long long)st.epoll_waits, (unsigned long long)st.scan_calls,
           (unsigned long long)st.uring_enters, (unsigned long long)st.uring_sqes,
           (unsigned long long)st.scan_fds, (unsigned long long)st.waits, (int)st.ctl_source);
}

/* Kernel events, and the family (index into the engine's printed counts) each one adds to. */
static const struct {
    const char *event;
    int family; /* 0 epoll_ctl, 1 epoll waits, 2 scans, 3 io_uring_enter, 4 SQEs */
} kevents[] = {
    {"syscalls:sys_enter_epoll_ctl", 0},      {"syscalls:sys_enter_epoll_wait", 1},
    {"syscalls:sys_enter_epoll_pwait", 1},    {"syscalls:sys_enter_epoll_pwait2", 1},
    {"syscalls:sys_enter_poll", 2},           {"syscalls:sys_enter_ppoll", 2},
    {"syscalls:sys_enter_select", 2},         {"syscalls:sys_enter_pselect6", 2},
    {"syscalls:sys_enter_io_uring_enter", 3}, {"io_uring:io_uring_submit_req", 4},
};
enum { NKEV = sizeof kevents / sizeof kevents[0], NFAM = 5 };

void t_kernel_calls(void)
{
    static const char *const fam[NFAM] = {"epoll_ctl", "epoll_wait", "poll/select",
                                          "io_uring_enter", "SQEs"};
    char perf_out[] = "/tmp/test-io-perf.XXXXXX", work_out[] = "/tmp/test-io-work.XXXXXX";
    char self[4096], events[1024] = "";
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    ASSERT_GE(sl, 1);
    self[sl] = 0;
    for (int i = 0; i < NKEV; i++)
        snprintf(events + strlen(events), sizeof events - strlen(events), "%s%s", i ? "," : "",
                 kevents[i].event);
    int pf = mkstemp(perf_out), wf = mkstemp(work_out);
    ASSERT_GE(pf, 0);
    ASSERT_GE(wf, 0);
    close(pf);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(wf, 1);
        execlp("perf", "perf", "stat", "-x,", "-e", events, "-o", perf_out, "--", self,
               "ctl_workload", engine_name, fb_policy_name(policy),
               fb_read_policy_name(read_policy), (char *)NULL);
        _exit(127);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    FILE *w = fopen(work_out, "r"), *p = fopen(perf_out, "r");
    unsigned long long eng[NFAM] = {0}, kern[NFAM] = {0}, fds = 0, waits = 0;
    int source = -1, have_w = 0, have_k = 0;
    char line[512];
    while (w && fgets(line, sizeof line, w))
        if (sscanf(line, "engine %llu %llu %llu %llu %llu %llu %llu %d", &eng[0], &eng[1], &eng[2],
                   &eng[3], &eng[4], &fds, &waits, &source) == 8)
            have_w = 1;
    while (p && fgets(line, sizeof line, p)) {
        /* value,unit,event,... (the unit is empty for tracepoints) */
        char *end, *name = strchr(line, ',');
        unsigned long long v = strtoull(line, &end, 10);
        if (end == line || !name || !(name = strchr(name + 1, ','))) continue;
        name++;
        name[strcspn(name, ",\n")] = 0;
        for (int i = 0; i < NKEV; i++)
            if (!strcmp(name, kevents[i].event)) {
                kern[kevents[i].family] += v;
                have_k++;
            }
    }
    if (w) fclose(w);
    if (p) fclose(p);
    unlink(work_out);
    unlink(perf_out);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 127 || have_k < NKEV) {
        printf("not run: perf stat with the syscall and io_uring tracepoints is unavailable "
               "(status %d, %d of %d events read)\n",
               status, have_k, NKEV);
        exit(77);
    }
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_EQ(have_w, 1);
    for (int f = 0; f < NFAM; f++)
        printf("%s: %-15s engine %llu, kernel %llu\n", engine_name, fam[f], eng[f], kern[f]);
    printf("%s: %llu waits, %llu fds passed to scans\n", engine_name, waits, fds);
    if (source == ENG_CTL_NONE) {
        printf("%s: the engine does not count its kernel calls (not counted)\n", engine_name);
        ASSERT_GE(kern[0] + kern[1], 1);
        return;
    }
    for (int f = 0; f < NFAM; f++)
        ASSERT_EQ(eng[f], kern[f]);
    ASSERT_GE(eng[0] + eng[1] + eng[2] + eng[3], 1); /* a workload that waited in the kernel */
}
