/* tc_proc.c - what /proc says about the server: fds, threads, memory, CPU, children. */
#include "tc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tc_proc_fds(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    int n = 0;
    ASSERT_MSG(d, "cannot open %s", path);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static long status_field(pid_t pid, const char *key)
{
    char path[64], line[256];
    long v = -1;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    size_t klen = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':')
            v = strtol(line + klen + 1, NULL, 10);
    if (f) fclose(f);
    return v;
}

long tc_proc_threads(pid_t pid)
{
    return status_field(pid, "Threads");
}

long tc_proc_rss_kb(pid_t pid)
{
    return status_field(pid, "VmRSS");
}

/*
 * Fields of /proc/PID/stat after the command name: state, ppid, ..., utime, stime, cutime,
 * cstime. The last two hold the CPU of children already reaped (fork's finished sessions).
 */
static int stat_of(pid_t pid, char *state, long long *ticks)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    long long ut = 0, st = 0, cut = 0, cst = 0;
    if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld %lld %lld", state,
                     &ut, &st, &cut, &cst) != 5)
        return -1;
    *ticks = ut + st + cut + cst;
    return 0;
}

int tc_proc_children(pid_t pid, pid_t *out, int max, int *zombies)
{
    char path[96], buf[65536];
    int n = 0;
    *zombies = 0;
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[got] = '\0';
    for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n")) {
        pid_t c = (pid_t)atoi(tok);
        char state = 0;
        long long t;
        if (stat_of(c, &state, &t) == 0 && state == 'Z') (*zombies)++;
        if (n < max) out[n] = c;
        n++;
    }
    return n;
}

long long tc_proc_cpu_ticks(pid_t pid)
{
    char state;
    long long total = 0, t = 0;
    pid_t kids[4096];
    int z;
    ASSERT_MSG(stat_of(pid, &state, &total) == 0, "cannot read /proc/%d/stat", (int)pid);
    int n = tc_proc_children(pid, kids, 4096, &z);
    for (int i = 0; i < n && i < 4096; i++)
        if (stat_of(kids[i], &state, &t) == 0) total += t;
    return total;
}

/* Say what the server still holds, for the failure message of tc_wait_quiet. */
static void show_open(pid_t pid)
{
    char path[320], link[256];
    pid_t kids[1];
    int z, n = tc_proc_children(pid, kids, 1, &z);
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/%d/fd/%s", (int)pid, e->d_name);
        ssize_t len = readlink(path, link, sizeof link - 1);
        link[len > 0 ? len : 0] = '\0';
        tc_note("server fd %s -> %s", e->d_name, link);
    }
    if (d) closedir(d);
    tc_note("server children: %d (%d zombies)", n, z);
}

int tc_tree_fds(pid_t pid)
{
    pid_t kids[4096];
    int z, n = tc_proc_children(pid, kids, 4096, &z), fds = tc_proc_fds(pid);
    char path[64];
    for (int i = 0; i < n && i < 4096; i++) {
        snprintf(path, sizeof path, "/proc/%d/fd", (int)kids[i]);
        DIR *d = opendir(path); /* a child that just ended has no fds to count */
        for (struct dirent *e; d && (e = readdir(d));)
            fds += e->d_name[0] != '.';
        if (d) closedir(d);
    }
    return fds;
}

bool tc_wait_quiet(const struct tc_server *s, int fds, int timeout_ms)
{
    long long deadline = tc_now_ms() + timeout_ms;
    pid_t kids[1];
    int z;
    for (;;) {
        /* At most the baseline: a leak shows as more. Fewer is no leak; the baseline itself
         * can include a transient fd (seen under ASan with two loops starting up). */
        if (tc_tree_fds(s->pid) <= fds && tc_proc_children(s->pid, kids, 1, &z) <= s->kids0)
            return true;
        if (tc_now_ms() > deadline) {
            tc_note("expected at most %d fds (server and children) and %d children", fds, s->kids0);
            show_open(s->pid);
            return false;
        }
        tc_sleep_ms(10);
    }
}
