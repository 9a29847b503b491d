"""The driver library: what every benchmark driver does the same way.

    cpu     the one taskset wrapper; CPU per request from perf's task-clock or the server's
            own rusage
    server  start echo-server, read the port it announces, stop it with SIGTERM, read its
            statistics line
    load    run echo-load and read its JSON
    perf    perf stat attached to a process or around a command, and the one reader of its
            CSV output
    rounds  interleaved rounds (the order rotates each round), paired per-round ratios and
            the A/A pair (one configuration twice a round: the noise floor)
    status  a measured point's status and reasons, from echo-load's own figures
    runnable  the runnable-task count (/proc/stat procs_running), sampled
    budget  time budgets: a step's seconds, what its repetitions cost, how many fit
    gbench  Google Benchmark's JSON: two invocations' repetitions merged into one document
    cli     the common flags (--build-dir, --out-file, --rounds, --duration, --warmup,
            --server-cpu, --load-cpu) and the JSON output
    meta    the run's meta block (commit, machine, kernel), the registries' listings and the
            one JSON writer
    stats   the project's statistics: medians, intervals, the Mann-Whitney U test
    sweep, sweep_point    the sweep over models, modes and levels (the sweep and slow steps)
    callgrind   instructions counted by callgrind (the icount and hooks steps, the gate)
    fiberio_runs, fiberio_sequential   the fiber IO runs (fiberio, peers) and their sampling
            until decided
    sequential, changepoint   the sequential design; change points of a run history
    suite_guard   the suite's lock, signals and cleanup

A driver (experiments/<name>.py) is its plan, a function that measures one configuration, and
a summary; it imports this package, never another driver, and it measures without judging:
thresholds and verdicts live in the claims (plots/). Nothing here imports experiments/.
"""
