"""The machine section: host, kernel, compiler, limits, the run's preset, load and steps."""
from formatting import value_text


def machine_section(run):
    m = run.meta()
    suite = run.get("suite") or {}
    props = run.get("props") or {}
    ctx = (run.get("switch") or {}).get("context", {})
    lim = m.get("limits", {})
    comp = m.get("compiler", {})
    out = ["## Machine", ""]
    if not m:
        return out + ["not run: no meta block in this run folder", ""]
    virt = props.get("virtualized")
    out += [
        f"- host `{m.get('host')}`: {m.get('cpu_model')}, {m.get('cores')} cores"
        + (f" at {ctx['mhz_per_cpu']} MHz" if ctx.get("mhz_per_cpu") else "")
        + (", virtual machine (hypervisor flag)" if virt else ""),
        f"- kernel {m.get('kernel')}; Spectre v2: {ctx.get('spectre_v2', 'unknown')}",
        f"- compiler {comp.get('version', '?')}, {comp.get('build_type', '?')}, flags "
        f"`{comp.get('flags', '?')}`",
        f"- git {m.get('git_sha')}" + (" (working tree had uncommitted changes)"
                                       if m.get("git_dirty") else ""),
        f"- limits: RLIMIT_NOFILE {lim.get('nofile_hard')} (hard), pid_max "
        f"{lim.get('pid_max')}, vm.max_map_count {lim.get('max_map_count')}, memory "
        f"{value_text((lim.get('mem_total_kb') or 0) / 1048576, '.1f')} GiB",
        f"- run: preset `{suite.get('preset', '?')}`, started {m.get('date')}, "
        f"{value_text((suite.get('seconds') or 0) / 60, '.1f')} min; load average (1/5/15 min) "
        f"at start {suite.get('loadavg_start')}, at end {suite.get('loadavg_end')} "
        + ("(the load average counts the suite's own servers and load generators: a "
           "thousand-thread server alone lifts it; what ran beside each step is below)"
           if steps_isolated(suite) else
           "(a server and its load keep about 2 runnable; figures well above that mean "
           f"other jobs competed for the {m.get('cores')} CPUs)"),
        "- pinning: servers on CPU 0 and echo-load on CPU 1 for the engine comparison, sweep "
        "and max-connections runs; switch-bench unpinned except its kernel rows",
    ]
    timing = time_line(suite)
    if timing:
        out.append(timing)
    hosts = load_hosts(run)
    if hosts:
        out.append(hosts)
    steps = suite.get("steps") or {}
    during = suite.get("loadavg_during")
    if during:
        out.append(f"- 1-minute load average sampled every {during['every_s']:.0f} s during the "
                   f"run: mean {during['mean_1min']:.1f}, highest {during['max_1min']:.1f} "
                   f"({m.get('cores')} cores)")
    if any(v.get("loadavg_after") for v in steps.values()):
        out.append("- load average (1/5/15 min) after each step: " + "; ".join(
            f"{k} " + "/".join(f"{x:.1f}" for x in v["loadavg_after"])
            for k, v in steps.items() if v.get("loadavg_after")))
    if steps:
        out.append("- steps: " + ", ".join(
            f"{k} {v['status']} ({v['seconds']:.0f} s"
            + (f" of {v['budget_s']:.0f}" if v.get("budget_s") is not None else "") + ")"
            for k, v in steps.items()))
    if steps_isolated(suite):
        out.append(isolation_line(suite))
    missing = [f"{k}: {v}" for k, v in run.missing.items() if k != "suite"]
    if missing:
        out.append("- missing experiments: " + "; ".join(missing))
    return out + [""]


def time_line(suite):
    """The run's time against what its preset promises (suite.json's totals, newer runs), or
    None: what ./run.sh spent before the suite (setup, build) and the suite's own seconds up
    to the report (which is written while the report step runs), against the total the suite
    was given."""
    total, run_s = suite.get("suite_budget_s"), suite.get("run_budget_s")
    if total is None or suite.get("seconds") is None:
        return None
    took, before = suite["seconds"], suite.get("run_before_suite_s")
    suite_text = f"the suite {took:.0f} s of the {total:.0f} s it was given"
    if before is None or not run_s:
        return f"- time: {suite_text}, up to this report"
    whole, over = before + took, suite.get("run_over_budget")
    return (f"- time: ./run.sh {whole:.0f} s up to this report, "
            + ("within its " if whole <= run_s else f"{whole - run_s:.0f} s over its ")
            + f"{run_s / 60:g} minutes: {before:.0f} s of setup and build, then {suite_text} "
            + (f"({over})" if over else
               f"(the {run_s / 60:g} minutes less the setup and build)"))


def load_hosts(run):
    """Where the load came from when not from this machine (--load-host), or None."""
    steps = {name: ((run.get(name) or {}).get("meta") or {}).get("load_hosts") for name in
             ("engines", "fiberio", "peers", "timers", "sweep", "slow", "maxconns")}
    hosts = [h for name in steps for h in steps[name] or []]
    if not hosts:
        return None
    seen = {h.get("host"): h for h in hosts}.values()
    return (f"- load: echo-load on other machines over ssh for "
            f"{', '.join(name for name in steps if steps[name])}, not on this one: " + "; ".join(
        f"`{h.get('host')}` ({h.get('cpu_model')}, {h.get('cores')} cores, {h.get('kernel')}, "
        f"{h.get('echo_load_version')}, ssh round trip {h.get('rtt_ms')} ms)" for h in seen))


def steps_isolated(suite):
    """Whether the suite waited for each step's predecessors to wind down (newer runs)."""
    return any("runnable_before" in v for v in (suite.get("steps") or {}).values())


def isolation_line(suite):
    """What the suite itself caused: the runnable tasks (procs_running) at its start, the wait
    before each step for an earlier step's tasks to end, and the most runnable during it."""
    steps = suite.get("steps") or {}
    base = suite.get("runnable_baseline")
    waits = [f"{k} {v['waited_s']:.0f} s" for k, v in steps.items() if v.get("waited_s", 0) >= 1]
    unsettled = [k for k, v in steps.items() if v.get("settled") is False]
    return (f"- step isolation: {base} tasks runnable (procs_running) at the start; before each "
            "step the suite waited until that count was back within 1 of it (at most 60 s)"
            + (": waited " + ", ".join(waits) if waits else ", never more than a second")
            + (f"; still above it when {', '.join(unsettled)} began (other jobs)"
               if unsettled else "")
            + ". Most runnable during each step (the step's own servers and load included): "
            + ", ".join(f"{k} {v.get('runnable_max')}" for k, v in steps.items()
                        if v.get("runnable_max") is not None))
