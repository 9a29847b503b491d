"""The machine section: host, kernel, compiler, limits, the run's preset, load and steps."""
from verdict import fmt


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
        f"{fmt((lim.get('mem_total_kb') or 0) / 1048576, '.1f')} GiB",
        f"- run: preset `{suite.get('preset', '?')}`, started {m.get('date')}, "
        f"{fmt((suite.get('seconds') or 0) / 60, '.1f')} min; load average (1/5/15 min) "
        f"at start {suite.get('loadavg_start')}, at end {suite.get('loadavg_end')} "
        f"(a server and its load keep about 2 runnable; figures well above that mean other "
        f"jobs competed for the {m.get('cores')} CPUs)",
        "- pinning: servers on CPU 0 and echo-load on CPU 1 for the engine comparison, sweep "
        "and max-connections runs; switch-bench unpinned except its kernel rows",
    ]
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
        out.append("- steps: " + ", ".join(f"{k} {v['status']} ({v['seconds']:.0f} s)"
                                           for k, v in steps.items()))
    missing = [f"{k}: {v}" for k, v in run.missing.items() if k != "suite"]
    if missing:
        out.append("- missing experiments: " + "; ".join(missing))
    return out + [""]
