// bench_stamp.h - when each run of a switch-bench row took place, for the harness to read the
// host's pace over it (harness/lib/host_pace.py, the switch step). With SWITCH_BENCH_STAMPS in
// the environment, a row's run records CLOCK_MONOTONIC at its start and its end as the
// counters host_t0_s and host_t1_s (seconds: the clock of Python's time.monotonic). Off by
// default, so that the other readers of the rows never see them.
#ifndef SWITCHYARD_BENCH_STAMP_H
#define SWITCHYARD_BENCH_STAMP_H

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <ctime>

class RunStamp
{
  public:
    explicit RunStamp(benchmark::State &state) : state_(state), t0_(enabled() ? now() : -1.0) {}
    ~RunStamp()
    {
        if (t0_ < 0) return;
        // kAvgThreads: a row run on several threads would otherwise sum the stamps.
        state_.counters["host_t0_s"] = benchmark::Counter(t0_, benchmark::Counter::kAvgThreads);
        state_.counters["host_t1_s"] = benchmark::Counter(now(), benchmark::Counter::kAvgThreads);
    }
    RunStamp(const RunStamp &) = delete;
    RunStamp &operator=(const RunStamp &) = delete;

  private:
    static bool enabled()
    {
        static const bool on = std::getenv("SWITCH_BENCH_STAMPS") != nullptr;
        return on;
    }
    static double now()
    {
        timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
    }
    benchmark::State &state_;
    double t0_;
};

#endif
