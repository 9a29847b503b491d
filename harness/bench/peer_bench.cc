// peer_bench.cc - switch-bench's peer/ rows (peer_loops.h): our runtime, Boost.Fiber and GNU
// Pth in the same scheduler and lock loops. C++ only to register them with Google Benchmark.
#include <benchmark/benchmark.h>

#include "bench_stamp.h"
#include "peer_loops.h"

#include <cerrno>
#include <cstring>
#include <string>

void register_peer_rows(); // called by switch_bench.cc's main

namespace
{

struct More {
    benchmark::State *state;
    long batch;
};

// Called on the measuring fiber's stack before each batch.
bool more(void *arg)
{
    auto *m = static_cast<More *>(arg);
    return m->state->KeepRunningBatch(m->batch);
}

void BM_peer(benchmark::State &state, const peer_runtime *rt, peer_loop loop, long fibers)
{
    RunStamp stamp(state);
    if (loop == PEER_RING && rt->max_ring && fibers > rt->max_ring) {
        state.SkipWithError((std::string("not run: ") + rt->why_max).c_str());
        return;
    }
    peer_run r{};
    r.loop = loop;
    r.fibers = fibers;
    r.batch = peer_batch(loop, fibers);
    More m{&state, r.batch};
    r.more = more;
    r.more_arg = &m;
    if (rt->run(&r) != 0) {
        state.SkipWithError(("not run: " + std::string(rt->name) + " failed (" + strerror(errno) +
                             "; vm.max_map_count?)")
                                .c_str());
        return;
    }
    // A loop that skipped work, or counted what it did not do, fails its row.
    if (r.units == 0 || r.units != static_cast<uint64_t>(state.iterations())) {
        state.SkipWithError(("broken row: " + std::to_string(r.units) + " " + peer_unit(loop) +
                             " counted for " + std::to_string(state.iterations()) + " iterations")
                                .c_str());
        return;
    }
    state.counters["fibers"] = static_cast<double>(fibers);
    if (loop == PEER_MUTEX_CONTENDED)
        state.counters["second_fiber_share"] =
            static_cast<double>(r.partner) / static_cast<double>(r.units);
    std::string unit = peer_unit(loop);
    unit.pop_back(); // "hops" -> "hop"
    state.SetLabel("time per " + unit + "; " + r.note);
}

} // namespace

void register_peer_rows()
{
    std::string built;
    for (size_t i = 0; i < peer_count(); i++) {
        const peer_runtime *rt = peer_at(i);
        built += std::string(built.empty() ? "" : "; ") + rt->name + ": " + rt->what;
        char name[96];
        for (const long *n = peer_ring_fibers; *n; n++)
            if (peer_row_name(name, sizeof name, rt->name, PEER_RING, *n) == 0)
                benchmark::RegisterBenchmark(name, BM_peer, rt, PEER_RING, *n);
        for (peer_loop loop : {PEER_MUTEX_UNCONTENDED, PEER_MUTEX_CONTENDED, PEER_COND_UNCONTENDED,
                               PEER_COND_CONTENDED})
            if (peer_row_name(name, sizeof name, rt->name, loop, 0) == 0)
                benchmark::RegisterBenchmark(
                    name, BM_peer, rt, loop,
                    loop == PEER_MUTEX_CONTENDED || loop == PEER_COND_CONTENDED ? 2L : 1L);
    }
    benchmark::AddCustomContext("peers", built);
    benchmark::AddCustomContext("peers_not_built", *peer_not_built() ? peer_not_built() : "none");
}
