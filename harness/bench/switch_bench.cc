// switch_bench.cc - Google Benchmark rows: calls, syscalls, switches, creates, schedulers, kernel.
#include <benchmark/benchmark.h>

#include "bench_build_info.h"
#include "bench_stamp.h"
#include "bench_hook.h"
#include "bench_loops.h"
#include "bench_timers.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

// Time per unit, for every row: one call, one syscall, ONE switch (a round trip is two), one
// create+enter+finish, one hop, one one-way hand-off between threads or processes.
// Loops run in chunks inside KeepRunningBatch, so the chunk's own call is amortised.

namespace
{

constexpr long kChunk = 512;              // round trips (or calls) per loop call
constexpr size_t kSchedStack = 16 * 1024; // every sched row: 16 KiB usable per fiber
const long kFiberCounts[] = {2, 16, 256, 4096, 16384, 100000};
// Where guarded stacks do not fit vm.max_map_count, sched rows run on this many shared stacks
// (copy mode): two, so that consecutive fibers of a ring never share one.
constexpr unsigned kSchedSharedStacks = 2;
const long kCopyBytes[] = {8, 64, 256, 512, 1024, 4096, 8192};
const long kCopyFibers[] = {1, 100000};
std::vector<int> g_cpus; // CPUs this process may run on, from sched_getaffinity at start

void BM_call(benchmark::State &state)
{
    RunStamp stamp(state);
    while (state.KeepRunningBatch(kChunk))
        bl_call_loop(kChunk);
}

void BM_call_chain(benchmark::State &state)
{
    RunStamp stamp(state);
    long x = 0;
    while (state.KeepRunningBatch(kChunk))
        x = bl_call_chain(kChunk, x);
    benchmark::DoNotOptimize(x);
}

void BM_getppid(benchmark::State &state)
{
    RunStamp stamp(state);
    for (auto _ : state)
        benchmark::DoNotOptimize(syscall(SYS_getppid)); // glibc's getppid caches nothing either
}

void BM_switch(benchmark::State &state, const sw_backend *b)
{
    RunStamp stamp(state);
    bl_pair p;
    if (bl_pair_init(&p, b) != 0) {
        state.SkipWithError(("not run: " + std::string(strerror(errno))).c_str());
        return;
    }
    while (state.KeepRunningBatch(2 * kChunk))
        bl_pair_run(&p, kChunk);
    bl_pair_fini(&p);
}

// A backend the registry declares but this build left out: its row says why.
void BM_left_out(benchmark::State &state, std::string why)
{
    RunStamp stamp(state);
    state.SkipWithError(("not run: " + why).c_str());
    for (auto _ : state) {
    }
}

// The reference floor (bench_loops.h): not a backend, shown beside them.
void BM_floor(benchmark::State &state, bl_floor_kind kind)
{
    RunStamp stamp(state);
    bl_floor f;
    if (bl_floor_init(&f, kind) != 0) {
        state.SkipWithError(("not run: " + std::string(strerror(errno))).c_str());
        return;
    }
    state.SetLabel("reference: not ABI-complete, never used by fibers");
    while (state.KeepRunningBatch(2 * kChunk))
        bl_floor_run(&f, kChunk);
    bl_floor_fini(&f);
}

void BM_create(benchmark::State &state, const sw_backend *b)
{
    RunStamp stamp(state);
    constexpr long kCreates = 64;
    bl_create c;
    if (bl_create_init(&c, b) != 0) {
        state.SkipWithError(("not run: " + std::string(strerror(errno))).c_str());
        return;
    }
    bool ok = true;
    while (ok && state.KeepRunningBatch(kCreates))
        ok = bl_create_run(&c, kCreates) == 0;
    if (!ok) state.SkipWithError("sw_make failed");
    bl_create_fini(&c);
}

struct SchedMore {
    benchmark::State *state;
    long hops_per_call;
};

// Called on the driver fiber's stack: one batch of rounds per call.
bool sched_more(void *arg)
{
    auto *m = static_cast<SchedMore *>(arg);
    return m->state->KeepRunningBatch(m->hops_per_call);
}

void BM_sched(benchmark::State &state, fb_policy policy, const sw_backend *b)
{
    RunStamp stamp(state);
    bl_sched s{};
    s.policy = policy;
    s.backend = b;
    s.fibers = state.range(0);
    s.stack_size = kSchedStack;
    s.batch = bl_sched_batch(s.fibers);
    bool copy = !bl_guarded_fits(s.fibers);
    s.stack_mode = copy ? FB_STACK_COPY : FB_STACK_GUARDED;
    s.shared_stacks = copy ? kSchedSharedStacks : 0;
    SchedMore more{&state, s.batch * s.fibers};
    s.more = sched_more;
    s.more_arg = &more;
    if (bl_sched_run(&s) != 0) {
        std::string why = "not run: spawning " + std::to_string(s.fibers) + " fibers failed (" +
                          strerror(errno) + "; vm.max_map_count?)";
        state.SkipWithError(why.c_str());
        return;
    }
    state.counters["switches_per_hop"] = bl_sched_switches_per_hop(&s);
    state.counters["fibers"] = static_cast<double>(s.fibers);
    state.counters["shared_stacks"] = copy ? kSchedSharedStacks : 0;
    if (copy) {
        uint64_t hops = s.after.hops - s.before.hops;
        state.counters["restores_per_hop"] =
            hops ? static_cast<double>(s.after.stack_restores - s.before.stack_restores) / hops
                 : 0.0;
        state.SetLabel("copy:" + std::to_string(kSchedSharedStacks) +
                       " (guarded stacks exceed vm.max_map_count)");
    } else if (bl_sched_hops_inline(&s)) {
        state.SetLabel("inline hop (fiber_hop.h)");
    }
}

// One op: a resume of a fiber on a shared stack and its yield back, one live part of
// `bytes` (+ the runtime's own frames) saved and one restored (bench_loops.h). With
// `guarded`, the same loop on the same backend with a guarded stack per fiber, nothing moved:
// the figure the copy rows are held to.
void BM_copystack(benchmark::State &state, const sw_backend *b, bool guarded)
{
    RunStamp stamp(state);
    bl_copystack c{};
    c.backend = b;
    c.guarded = guarded;
    c.bytes = static_cast<size_t>(state.range(0));
    c.fibers = state.range(1);
    c.batch = bl_copystack_batch(c.fibers);
    SchedMore more{&state, c.batch};
    c.more = sched_more;
    c.more_arg = &more;
    if (bl_copystack_run(&c) != 0) {
        std::string why = "not run: " + std::to_string(c.fibers) + " fibers on a copy stack (" +
                          strerror(errno) + ")";
        state.SkipWithError(why.c_str());
        return;
    }
    uint64_t restores = c.after.stack_restores - c.before.stack_restores;
    uint64_t saves = c.after.stack_saves - c.before.stack_saves;
    double ops = static_cast<double>(c.ops);
    state.counters["fibers"] = static_cast<double>(c.fibers);
    state.counters["restores_per_op"] = ops ? restores / ops : 0.0;
    state.counters["saves_per_op"] = ops ? saves / ops : 0.0;
    state.counters["live_bytes"] =
        restores ? static_cast<double>(c.after.bytes_restored - c.before.bytes_restored) / restores
                 : 0.0;
    state.SetLabel(std::string(b->name) +
                   (guarded ? ", guarded stacks, star" : ", 1 shared stack, star"));
}

// ---- hook/ and sync/: the hooked calls and the fiber locks -------------------------------

struct BatchMore {
    benchmark::State *state;
    long batch;
};

bool batch_more(void *arg)
{
    auto *m = static_cast<BatchMore *>(arg);
    return m->state->KeepRunningBatch(m->batch);
}

void BM_hook(benchmark::State &state, bh_call call, bh_how how)
{
    RunStamp stamp(state);
    bh_io b{};
    b.call = call;
    b.how = how;
    b.batch = 4096;
    BatchMore more{&state, b.batch};
    b.more = batch_more;
    b.more_arg = &more;
    if (bh_io_run(&b) != 0) {
        state.SkipWithError(("not run: " + std::string(strerror(errno))).c_str());
        return;
    }
    state.SetLabel("1 byte per call on a ready pipe; 1/4096 of a refill");
}

void BM_sync(benchmark::State &state, bs_lock lock, bs_mode mode)
{
    RunStamp stamp(state);
    bs_sync s{};
    s.lock = lock;
    s.mode = mode;
    s.batch = mode == BS_UNCONTENDED ? 1024 : 64;
    BatchMore more{&state, s.batch};
    s.more = batch_more;
    s.more_arg = &more;
    if (bs_sync_run(&s) != 0) {
        state.SkipWithError(
            errno == EDEADLK
                ? (lock == BS_PTHREAD_MUTEX
                       ? "not run: a pthread mutex held across a fiber switch by two fibers of "
                         "one thread blocks that thread for good (engines/sync/deadlock_*)"
                       : "not run: fb_mutex serves the fibers of one runtime only (EPERM across "
                         "threads); the event lock is the cross-thread lock")
                : ("not run: " + std::string(strerror(errno))).c_str());
        return;
    }
    if (s.pairs) {
        state.counters["other_pairs_per_pair"] =
            static_cast<double>(s.other) / static_cast<double>(s.pairs);
        if (lock == BS_EVENT_LOCK) {
            state.counters["queued_per_pair"] =
                static_cast<double>(s.queued) / static_cast<double>(s.pairs);
            state.counters["wakeups_per_pair"] =
                static_cast<double>(s.wakeups) / static_cast<double>(s.pairs);
        }
    }
}

// ---- kernel ping-pongs ---------------------------------------------------------------------

int pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

// Pins the calling thread for the row's lifetime and restores its old mask afterwards.
class Placement
{
  public:
    Placement(benchmark::State &state, bool cross) : ok_(false)
    {
        sched_getaffinity(0, sizeof saved_, &saved_);
        if (g_cpus.empty() || (cross && g_cpus.size() < 2)) {
            state.SkipWithError("not run: needs 2 CPUs");
            return;
        }
        a_ = g_cpus.at(0);
        b_ = cross ? g_cpus.at(1) : a_;
        if (pin_self(a_) != 0) {
            state.SkipWithError("not run: sched_setaffinity failed");
            return;
        }
        ok_ = true;
        state.SetLabel("cpus " + std::to_string(a_) + "," + std::to_string(b_));
        state.counters["cpu_a"] = a_;
        state.counters["cpu_b"] = b_;
    }
    ~Placement() { sched_setaffinity(0, sizeof saved_, &saved_); }
    bool ok() const { return ok_; }
    int partner_cpu() const { return b_; }

  private:
    bool ok_;
    int a_ = 0, b_ = 0;
    cpu_set_t saved_;
};

long futex(std::atomic<int> *word, int op, int val)
{
    return syscall(SYS_futex, reinterpret_cast<int *>(word), op, val, nullptr, nullptr, 0);
}

// The token: 0 = with the main thread, 1 = with the partner, 2 = partner must stop.
struct Token {
    std::atomic<int> word{0};
    int cpu = 0;
};

void *futex_partner(void *arg)
{
    auto *t = static_cast<Token *>(arg);
    pin_self(t->cpu);
    for (;;) {
        int v;
        while ((v = t->word.load()) == 0)
            futex(&t->word, FUTEX_WAIT_PRIVATE, 0);
        if (v == 2) return nullptr;
        t->word.store(0);
        futex(&t->word, FUTEX_WAKE_PRIVATE, 1);
    }
}

void BM_thread_pingpong(benchmark::State &state, bool cross)
{
    RunStamp stamp(state);
    Placement where(state, cross);
    if (!where.ok()) return;
    Token t;
    t.cpu = where.partner_cpu();
    pthread_t partner;
    if (pthread_create(&partner, nullptr, futex_partner, &t) != 0) {
        state.SkipWithError("not run: pthread_create failed");
        return;
    }
    while (state.KeepRunningBatch(2)) { // a round trip is two one-way hand-offs
        t.word.store(1);
        futex(&t.word, FUTEX_WAKE_PRIVATE, 1);
        while (t.word.load() == 1)
            futex(&t.word, FUTEX_WAIT_PRIVATE, 1);
    }
    t.word.store(2);
    futex(&t.word, FUTEX_WAKE_PRIVATE, 1);
    pthread_join(partner, nullptr);
}

// The child echoes one byte per read until its pipe closes; it never returns to the harness.
[[noreturn]] void pipe_child(int in, int out, int cpu)
{
    pin_self(cpu);
    char c;
    while (read(in, &c, 1) == 1)
        if (write(out, &c, 1) != 1) break;
    _exit(0);
}

void BM_process_pingpong(benchmark::State &state, bool cross)
{
    RunStamp stamp(state);
    Placement where(state, cross);
    if (!where.ok()) return;
    int to_child[2], to_parent[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(to_parent, O_CLOEXEC) != 0) {
        state.SkipWithError("not run: pipe failed");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(to_child[1]);
        close(to_parent[0]);
        pipe_child(to_child[0], to_parent[1], where.partner_cpu());
    }
    close(to_child[0]);
    close(to_parent[1]);
    bool ok = pid > 0;
    char c = 'x';
    while (ok && state.KeepRunningBatch(2))
        ok = write(to_child[1], &c, 1) == 1 && read(to_parent[0], &c, 1) == 1;
    close(to_child[1]); // the child reads EOF and exits
    close(to_parent[0]);
    if (pid > 0) waitpid(pid, nullptr, 0);
    if (!ok) state.SkipWithError("pipe ping-pong failed (fork, read or write)");
}

// ---- timers/: arm, cancel and expire per timer structure (bench_timers.h) ------------------

// One row per phase: the same loop runs, and the row reports its own phase's time per op. The
// three rows of a structure, workload and size are registered together and share one warmed-up
// set of timers (arming 10^6 and reaching the steady state takes longer than the row).
bt_timers g_timers;
// Batches per row and repetition, a fixed count rather than --benchmark_min_time: the loop runs
// all three phases and the row times one, so reaching 0.1 s of one phase's time took up to
// 74 s for one repetition of a row where that phase is a small share of the batch (the 25
// expiries among 512 cancels, rbtree, 10^6 pending), and 500 s for one repetition of the 60
// rows at 10^5 and 10^6 (the full preset runs 5).
constexpr size_t TIMER_BATCHES = 256;

void BM_timers(benchmark::State &state, const tm_ops *t, bt_workload w, bt_op op)
{
    RunStamp stamp(state);
    auto pending = static_cast<size_t>(state.range(0));
    bt_timers &b = g_timers;
    if (b.ops != t || b.workload != w || b.pending != pending) {
        bt_timers_fini(&b);
        b = bt_timers{};
        b.ops = t;
        b.workload = w;
        b.pending = pending;
        if (bt_timers_init(&b) != 0) {
            b.ops = nullptr;
            state.SkipWithError(("not run: " + std::string(strerror(errno))).c_str());
            return;
        }
    }
    // A batch during which the thread lost the CPU (a shared machine) is run again, up to 20
    // times: its time would hold someone else's time slice. preempted: the share run again.
    uint64_t batches = b.batches, preempted = b.preempted;
    while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(b.per_batch[op]))) {
        int tries = 0;
        do
            bt_timers_batch(&b);
        while (b.last_preempted && ++tries < 20);
        state.SetIterationTime(static_cast<double>(b.last_ns[op]) / 1e9);
    }
    state.counters["per_batch"] = static_cast<double>(b.per_batch[op]);
    if (b.batches > batches)
        state.counters["preempted"] =
            static_cast<double>(b.preempted - preempted) / static_cast<double>(b.batches - batches);
    state.SetLabel(std::string(t->name) + ", " + bt_workload_name(w) + ", ns per " +
                   bt_op_name(op));
}

// ---- machine context -----------------------------------------------------------------------

std::string first_line_of(const char *path, const char *fallback)
{
    std::ifstream in(path);
    std::string line;
    return std::getline(in, line) && !line.empty() ? line : fallback;
}

std::string cpu_model()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}

// An aarch64 build that finds an x86 /proc/cpuinfo (qemu-user passes the host's file through)
// runs under a user-mode emulator: its times are the emulator's, and it says so.
std::string emulation()
{
#if defined(__aarch64__)
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("vendor_id", 0) == 0)
            return "EMULATED: an aarch64 binary on an x86 host (qemu-user); times are the "
                   "emulator's, not an aarch64 core's";
#endif
    return "";
}

void add_context(int pinned_cpu)
{
    struct utsname u;
    uname(&u);
    std::string cpus;
    for (int c : g_cpus)
        cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    benchmark::AddCustomContext("cpu_model", cpu_model());
    benchmark::AddCustomContext("cores_online", std::to_string(sysconf(_SC_NPROCESSORS_ONLN)));
    benchmark::AddCustomContext("cpus_allowed", cpus);
    benchmark::AddCustomContext("kernel",
                                std::string(u.sysname) + " " + u.release + " " + u.machine);
    benchmark::AddCustomContext(
        "governor", first_line_of("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                                  "not readable (no cpufreq)"));
    benchmark::AddCustomContext(
        "spectre_v2", first_line_of("/sys/devices/system/cpu/vulnerabilities/spectre_v2", "?"));
    benchmark::AddCustomContext(
        "pinning", pinned_cpu >= 0 ? "main thread on cpu " + std::to_string(pinned_cpu) + " (--pin)"
                                   : std::string("none; kernel/* rows pin and label themselves"));
    benchmark::AddCustomContext("git_sha", SWITCHYARD_GIT_SHA);
    benchmark::AddCustomContext("compiler", SWITCHYARD_C_COMPILER);
    benchmark::AddCustomContext("c_flags", SWITCHYARD_C_FLAGS);
    benchmark::AddCustomContext("switch_backends", sw_backend_names());
    benchmark::AddCustomContext("sched_stack",
                                std::to_string(kSchedStack / 1024) +
                                    " KiB usable per fiber, guarded, pooled; where guarded stacks "
                                    "exceed vm.max_map_count, copy mode on " +
                                    std::to_string(kSchedSharedStacks) + " shared stacks");
    benchmark::AddCustomContext(
        "units", "time per call, syscall, ONE switch, create, hop, one-way kernel hand-off");
#ifdef SWITCHYARD_ASAN
    benchmark::AddCustomContext("sanitizers", "ASan+UBSan build: timings are meaningless");
#endif
    if (!emulation().empty()) benchmark::AddCustomContext("emulated", emulation());
}

void register_rows()
{
    benchmark::RegisterBenchmark("call/noinline", BM_call);
    benchmark::RegisterBenchmark("call/chain", BM_call_chain);
    benchmark::RegisterBenchmark("syscall/getppid", BM_getppid);
    for (size_t i = 0; i < sw_backend_count(); i++) {
        const sw_backend *b = sw_backend_at(i);
        benchmark::RegisterBenchmark(("switch/" + std::string(b->name)).c_str(), BM_switch, b);
    }
    const char *why;
    for (size_t i = 0; const char *name = sw_backend_left_out(i, &why); i++)
        benchmark::RegisterBenchmark(("switch/" + std::string(name)).c_str(), BM_left_out,
                                     std::string(why));
    benchmark::RegisterBenchmark("switch/floor", BM_floor, BL_FLOOR);
    benchmark::RegisterBenchmark("switch/floor-fp", BM_floor, BL_FLOOR_FP);
    // The return-stack predictor's share: the same switch resuming with `ret` and with a `jmp`.
    benchmark::RegisterBenchmark("resume/floor-ret", BM_floor, BL_FLOOR_RET);
    benchmark::RegisterBenchmark("resume/floor-jmp", BM_floor, BL_FLOOR);
    for (size_t i = 0; i < sw_backend_count(); i++) {
        const sw_backend *b = sw_backend_at(i);
        benchmark::RegisterBenchmark(("create/" + std::string(b->name)).c_str(), BM_create, b);
    }
    for (fb_policy policy : {FB_STAR, FB_RING}) {
        for (size_t i = 0; i < sw_backend_count(); i++) {
            const sw_backend *b = sw_backend_at(i);
            std::string name = "sched/" + std::string(fb_policy_name(policy)) + "/" + b->name;
            auto *bm = benchmark::RegisterBenchmark(name.c_str(), BM_sched, policy, b);
            bm->ArgName("fibers");
            for (long n : kFiberCounts)
                bm->Arg(n);
        }
    }
    // The copy-stack rows run on the first backend of the registry that can move stacks,
    // beside the same loop on guarded stacks with one fiber (the yardstick of their cost).
    for (size_t i = 0; i < sw_backend_count(); i++) {
        const sw_backend *b = sw_backend_at(i);
        if (!b->props.copy_stack) continue;
        auto *g = benchmark::RegisterBenchmark("copystack/guarded", BM_copystack, b, true);
        g->ArgNames({"bytes", "fibers"});
        g->Args({8, 1});
        auto *bm = benchmark::RegisterBenchmark("copystack/resume", BM_copystack, b, false);
        bm->ArgNames({"bytes", "fibers"});
        for (long f : kCopyFibers)
            for (long n : kCopyBytes)
                bm->Args({n, f});
        break;
    }
    static const struct {
        const char *name;
        bh_how how;
    } hows[] = {{"syscall", BH_SYSCALL},
                {"fallthrough", BH_FALLTHROUGH},
                {"direct", BH_DIRECT},
                {"hooked", BH_HOOKED}};
    for (bh_call call : {BH_READ, BH_WRITE})
        for (const auto &h : hows) {
            std::string name =
                std::string("hook/") + (call == BH_READ ? "read" : "write") + "/pipe/" + h.name;
            benchmark::RegisterBenchmark(name.c_str(), BM_hook, call, h.how);
        }
    static const struct {
        const char *name;
        bs_lock lock;
    } locks[] = {{"fiber_mutex", BS_FIBER_MUTEX},
                 {"event_lock", BS_EVENT_LOCK},
                 {"pthread_mutex", BS_PTHREAD_MUTEX}};
    static const struct {
        const char *name;
        bs_mode mode;
    } modes[] = {{"uncontended", BS_UNCONTENDED},
                 {"contended/fibers:2", BS_FIBERS},
                 {"contended/threads:2", BS_THREADS}};
    for (const auto &m : modes)
        for (const auto &l : locks) {
            std::string name = std::string("sync/") + l.name + "/" + m.name;
            auto *bm = benchmark::RegisterBenchmark(name.c_str(), BM_sync, l.lock, m.mode);
            if (m.mode == BS_THREADS) bm->UseRealTime(); // the partner's CPU time is not ours
        }
    benchmark::RegisterBenchmark("kernel/thread_pingpong/same_cpu", BM_thread_pingpong, false);
    benchmark::RegisterBenchmark("kernel/thread_pingpong/cross_cpu", BM_thread_pingpong, true);
    benchmark::RegisterBenchmark("kernel/process_pingpong/same_cpu", BM_process_pingpong, false);
    benchmark::RegisterBenchmark("kernel/process_pingpong/cross_cpu", BM_process_pingpong, true);
    for (int w = 0; w < BT_WORKLOADS; w++)
        for (size_t i = 0; i < tm_count(); i++)
            for (long n : {100L, 1000L, 10000L, 100000L, 1000000L})
                for (int op = 0; op < BT_OPS; op++) {
                    const tm_ops *t = tm_at(i);
                    std::string name = std::string("timers/") + bt_workload_name(bt_workload(w)) +
                                       "/" + bt_op_name(bt_op(op)) + "/" + t->name;
                    auto *bm = benchmark::RegisterBenchmark(name.c_str(), BM_timers, t,
                                                            bt_workload(w), bt_op(op));
                    bm->ArgName("pending")->Arg(n)->UseManualTime()->Iterations(
                        static_cast<benchmark::IterationCount>(
                            bt_timers_per_batch(bt_workload(w), size_t(n), bt_op(op)) *
                            TIMER_BATCHES));
                }
}

} // namespace

void register_peer_rows(); // peer_bench.cc: the peer/ rows

int main(int argc, char **argv)
{
    // A short default run: 0.1 s per row instead of Google Benchmark's 0.5 s, unless the
    // command line says otherwise.
    std::vector<char *> args(argv, argv + argc);
    static char short_run[] = "--benchmark_min_time=0.1";
    bool has_min_time = false;
    for (int i = 1; i < argc; i++)
        has_min_time |= strncmp(argv[i], "--benchmark_min_time", 20) == 0;
    if (!has_min_time) args.insert(args.begin() + 1, short_run);
    int n = static_cast<int>(args.size());
    benchmark::Initialize(&n, args.data());

    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set)) g_cpus.push_back(c);
    int pinned = -1;
    for (int i = 1; i < n; i++) {
        char *end;
        if (strncmp(args[i], "--pin=", 6) == 0) {
            pinned = static_cast<int>(strtol(args[i] + 6, &end, 10));
            if (*end || pinned < 0 || pin_self(pinned) != 0) {
                fprintf(stderr, "switch-bench: --pin=CPU needs a CPU this process may use\n");
                return 2;
            }
            args.erase(args.begin() + i--);
            n--;
        }
    }
    if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;
    add_context(pinned);
    register_rows();
    register_peer_rows();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
