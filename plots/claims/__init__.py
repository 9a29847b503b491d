"""The claims the report judges, in the report's order: one module per claim, one line here.

Each claim module (cNN_<slug>.py) holds everything about its claim and nothing else:

    ID, SOURCE, CLAIM, QUOTED   the claim as the seed article states it, and its figures
    BRIEF                       the claim in about a dozen words (the report's summary)
    CHARTS                      the chart stems (plots/charts) its section shows
    UPPER_CASE constants        its thresholds, written once; RULE is formatted from them
    measure(run)                its deciding figures from a loaded run (plots/data.py):
                                {"lines", "figures", "numbers", <deciding values>}
    judge(m)                    the verdict from measure's figures and the thresholds
    verdict(run)                verdict.result(...) for the report and plots/compare.py

A new claim is a new module here plus its line in NAMES.
"""
import importlib

import verdict as V

NAMES = [
    "c01_ring_star",
    "c02_merged_epoll_ctl",
    "c03_naive_pattern",
    "c04_ucontext_syscall",
    "c05_switch_50ns",
    "c06_thread_collapse",
    "c07_c10k",
    "c08_thread_memory",
    "c09_syscall_cycles",
    "c10_100k_connections",
    "c11_scheduler_per_core",
    "c12_guard_copy_stack",
    "c13_sync_code_async_speed",
    "c14_epoll_ctl_log_n",
    "c15_cfs_log_m",
    "c16_poll_scans",
    "c17_timer_structures",
]

CLAIMS = [importlib.import_module(f"claims.{name}") for name in NAMES]


def by_id(cid):
    return next(c for c in CLAIMS if c.ID == cid)


def evaluate(run, tolerant=False):
    """{claim id: result} for every claim. tolerant: a rule that cannot read the run (an
    older run whose files lack what today's rule expects, such as the committed reference
    before it is regenerated) gives `not run` saying why, instead of failing the whole
    report."""
    out = {}
    for claim in CLAIMS:
        try:
            out[claim.ID] = claim.verdict(run)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                ZeroDivisionError) as e:
            if not tolerant:
                raise
            out[claim.ID] = V.result(V.NOTRUN, "", [f"- this run's files do not have what the "
                                                    f"rule reads ({type(e).__name__}: {e})"])
    return out
