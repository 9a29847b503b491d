#!/usr/bin/python3
"""aco_side.py - our switch and copy-stack resume beside libaco's, timed in alternating processes.

libaco is not in Debian and not in this tree. Build peer-aco from a libaco checkout
(cmake -DSWITCHYARD_LIBACO_DIR=DIR, harness/bench/peer_aco.c), then this runs ROUNDS rounds of
one switch-bench process and one peer-aco process and takes each row's median of the
repetitions per process.

The rounds go in blocks of two, one of each order (ours first, then libaco's first), and a
pair's figure is the block's ratio: the geometric mean of its two rounds' ratios (ours /
libaco's). Whatever a process's place in the sequence costs then falls on both sides of
every block: each block has one process of each program at an even place and one at an odd
place. On the AMD EPYC VM (2026-12-06), processes timing the 8-byte copy-stack row at 10^5
fibers alone read fast and slow by turns, whatever their program (in the orders ours, ours,
libaco's, libaco's and ours, libaco's, libaco's, ours alike, the second and fourth process
read 28-32 ns, the others 21-25), so with the order flipped every round the rounds' ratios
alternated between about 0.73 and 1.33, and with it never flipped every ratio would carry the
same bias. Each process also runs a fresh copy of its program, all at one path
(regress_paired.fresh_copy): every process of one file can sit in a mode of its own, and a
new file per process makes that scatter between processes.

The blocks' median comes with a 95% bootstrap interval; a pair with a target says "met" when
the whole interval is at or below it, "not met" when the whole interval is above it, and
"inconclusive" otherwise. ROUNDS is even and at least 12: with fewer than 6 blocks no interval
reaches 95% without assuming the noise's shape (the sign test's smallest p with 5 is 1/32).

The pairs and targets are issue 37's: switch/asm at most 0.7x acosw, the compiler-assisted
backend's ring hop at most 0.5x acosw, the copy-stack resume at 10^5 fibers and 8 live bytes
at most libaco's (1.0x). The others are shown for context.

  aco_side.py --bin build-aco/bin [--rounds 12] [--min-time 0.2] [--only ROWS] [--out FILE]

--only times the pairs of the rows named (ours, e.g. copystack/resume/bytes:8/fibers:100000)
alone: a process then lasts about a second, not seven, so more rounds fit in a sitting.

The host's slow spells are watched as the suite's switch step watches them (lib/host_pace.py):
with host-pace in the --bin folder (cmake --build BUILD --target host-pace), a probe on every
CPU the programs may run on times its spin through the whole sitting, and a block any of
whose processes overlapped a stretch the host held a CPU back is set aside, unless fewer than
6 blocks would be left (all are then kept, and the output says so). The choice is the probe's
alone, never the rows' times. Such a spell slows the programs unequally: on the AMD EPYC VM
(2026-12-07) it took our 2.4 ns ring hop to 3.2-4.1 ns and acosw's 5.5 ns to 6.0-6.4, so the
rounds it covered read 0.51-0.74 against 0.38-0.47. Without host-pace the sitting is not
watched, and the output says that too.

Exit status: 0 measured (whatever the verdicts), 1 not run (the reason on standard error),
2 bad usage.
"""
import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from gate import regress_paired as P
from lib import host_pace, meta, stats

# (our row, libaco's row, target or None, what the ratio compares)
PAIRS = [
    ("switch/asm", "aco/acosw", 0.7, "a switch: our asm backend / acosw"),
    ("switch/asm-nofpu", "aco/acosw", None, "a switch: asm without the FPU control words"),
    ("switch/cc", "aco/acosw", None, "a switch: the compiler-assisted backend"),
    ("switch/cc-nofpu", "aco/acosw", None, "a switch: compiler-assisted, no FPU words"),
    ("switch/floor", "aco/acosw", None, "a switch: the reference floor"),
    ("sched/ring/cc/fibers:16", "aco/acosw", 0.5, "ring hop (cc) / one acosw"),
    ("sched/ring/cc-nofpu/fibers:16", "aco/acosw", 0.5, "ring hop (cc-nofpu) / one acosw"),
    ("sched/star/asm/fibers:16", "aco/resume/standalone/fibers:16", None,
     "a hop through the scheduler / aco_resume+yield, 16 fibers, no copy"),
    ("copystack/resume/bytes:8/fibers:100000", "aco/resume/bytes:8/fibers:100000", 1.0,
     "copy-stack resume, 8 live bytes, 10^5 fibers"),
    ("copystack/resume/bytes:64/fibers:100000", "aco/resume/bytes:64/fibers:100000", None,
     "copy-stack resume, 64 live bytes, 10^5 fibers"),
    ("copystack/resume/bytes:512/fibers:100000", "aco/resume/bytes:512/fibers:100000", None,
     "copy-stack resume, 512 live bytes, 10^5 fibers"),
]
# Six blocks of two rounds: the fewest whose sign-test interval can reach 95%.
MIN_ROUNDS = 12
MIN_BLOCKS = MIN_ROUNDS // 2
NOT_BUILT = ("peer-aco is not built in %s (configure with -DSWITCHYARD_LIBACO_DIR=<a libaco "
             "checkout>; libaco is neither in Debian nor in this repository)")


def judge(ratios, target):
    """(median, (low, high), verdict) of per-round ratios against a target (None: no verdict)."""
    mid = stats.median(ratios)
    low, high = stats.bootstrap_ci(ratios)
    if target is None:
        return mid, (low, high), ""
    verdict = "met" if high <= target else "not met" if low > target else "inconclusive"
    return mid, (low, high), verdict


def measure(exes, rounds, cfg, log, pairs=PAIRS, ws=()):
    """({side: {row: [median of the repetitions, one per round]}}, [(start, end) of each
    round on time.monotonic's clock], [the stretches the watches saw a CPU held back]): ours
    first in even rounds, libaco's first in odd ones, each process a fresh copy of its
    program."""
    filters = {"ours": P.rows_filter(sorted({p[0] for p in pairs})),
               "aco": P.rows_filter(sorted({p[1] for p in pairs}))}
    per_round, spans = {"ours": {}, "aco": {}}, []
    probes = [(w, w.start()) for w in ws]
    try:
        # Beside the build, which runs its programs: a temporary folder may be noexec.
        with tempfile.TemporaryDirectory(prefix="aco.", dir=exes["ours"].parent) as tmp:
            for i in range(rounds):
                t0 = time.monotonic()
                for side in (("ours", "aco") if i % 2 == 0 else ("aco", "ours")):
                    print("aco_side: round %d of %d: %s" % (i + 1, rounds, side), file=log)
                    copy = P.fresh_copy(exes[side], tmp)
                    got = P.one_process(copy, dict(cfg, filter=filters[side]), exes[side])
                    for row, times in got.items():
                        per_round[side].setdefault(row, []).append(stats.median(times))
                spans.append((t0, time.monotonic()))
    finally:
        stretches = host_pace.merged([st for w, proc in probes for st in w.stretches(proc)])
    return per_round, spans, stretches


def held_blocks(spans, stretches):
    """For each block of two rounds, whether either round overlapped a held-back stretch."""
    held = [host_pace.overlaps(span, stretches) for span in spans]
    return [held[i] or held[i + 1] for i in range(0, len(held) - 1, 2)]


def sets_aside(held):
    """Whether the held blocks are left out: only while MIN_BLOCKS calm ones remain (the switch
    step's rule for its repetitions, in gbench.set_aside: what is left must still decide)."""
    return sum(not h for h in held) >= MIN_BLOCKS


def calm(per_block, held):
    """(the blocks judged, whether held ones are among them)."""
    if not sets_aside(held):
        return per_block, any(held)
    return [b for b, h in zip(per_block, held) if not h], False


def blocks(ratios):
    """The geometric mean of each two rounds' ratios, rounds 0 and 1, 2 and 3, ... (one of
    each order); an odd last round is left out."""
    return [math.sqrt(ratios[i] * ratios[i + 1]) for i in range(0, len(ratios) - 1, 2)]


def pairs_of(per_round, pairs=PAIRS, held=None):
    """Each pair's figure and verdict over its calm blocks (held: one flag per block, None
    when the sitting was not watched)."""
    out = []
    for ours, aco, target, what in pairs:
        a, b = per_round["ours"].get(ours, []), per_round["aco"].get(aco, [])
        n = min(len(a), len(b))
        if n < MIN_ROUNDS:
            out.append({"ours": ours, "aco": aco, "what": what, "target": target,
                        "status": "not run: %s has %d rounds, %s %d" % (ours, len(a), aco,
                                                                        len(b))})
            continue
        ratios = [x / y for x, y in zip(a[:n], b[:n])]
        per_block = blocks(ratios)
        kept, all_kept = calm(per_block, held or [False] * len(per_block))
        mid, (low, high), verdict = judge(kept, target)
        out.append({"ours": ours, "aco": aco, "what": what, "target": target,
                    "status": "ok", "ours_ns": stats.median(a), "aco_ns": stats.median(b),
                    "ratio": mid, "interval": [low, high], "verdict": verdict,
                    "ratios": ratios, "blocks": per_block, "blocks_judged": len(kept),
                    "held_kept": all_kept})
    return out


def table(rows):
    lines = ["%-44s %9s %9s  %-22s %s" % ("ours / libaco", "ours ns", "aco ns", "ratio [95%]",
                                           "target")]
    for r in rows:
        if r["status"] != "ok":
            lines.append("%-44s %s" % (r["ours"], r["status"]))
            continue
        tgt = "<= %g: %s" % (r["target"], r["verdict"]) if r["target"] else ""
        lines.append("%-44s %9.2f %9.2f  %.2f [%.2f, %.2f]%s %s"
                     % (r["ours"] + " / " + r["aco"].split("/", 1)[1], r["ours_ns"],
                        r["aco_ns"], r["ratio"], r["interval"][0], r["interval"][1],
                        " " * 3, tgt))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/bin",
                    help="the folder with switch-bench and peer-aco (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=MIN_ROUNDS,
                    help="processes a side, an even number, at least %d (default: "
                         "%%(default)s)" % MIN_ROUNDS)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.2,
                    help="seconds of each row in each repetition (default: %(default)s)")
    ap.add_argument("--only", metavar="ROWS",
                    help="time only the pairs of these rows of ours (comma-separated), alone "
                         "in their processes (default: every pair)")
    ap.add_argument("--out", help="write the rounds, ratios and verdicts as JSON here")
    a = ap.parse_args(argv)
    pairs = PAIRS
    if a.only:
        wanted = a.only.split(",")
        pairs = [p for p in PAIRS if p[0] in wanted]
        unknown = sorted(set(wanted) - {p[0] for p in pairs})
        if unknown:
            print("aco_side.py: --only: no pair for %s (rows: %s)"
                  % (", ".join(unknown), ", ".join(p[0] for p in PAIRS)), file=sys.stderr)
            return 2
    if a.rounds < MIN_ROUNDS or a.rounds % 2 or a.repetitions < 1 or not 0 < a.min_time <= 10:
        print("aco_side.py: --rounds must be even and at least %d, --repetitions at least 1 "
              "and --min-time in (0, 10] seconds" % MIN_ROUNDS, file=sys.stderr)
        return 2
    bin_dir = Path(a.bin).resolve()
    exes = {"ours": bin_dir / "switch-bench", "aco": bin_dir / "peer-aco"}
    if not os.access(exes["ours"], os.X_OK):
        print("aco_side.py: not run: %s not found (build first: ./run.sh build)"
              % exes["ours"], file=sys.stderr)
        return 1
    if not os.access(exes["aco"], os.X_OK):
        print("aco_side.py: not run: " + NOT_BUILT % bin_dir, file=sys.stderr)
        return 1
    cfg = {"repetitions": a.repetitions, "min_time": a.min_time}
    ws, unwatched = host_pace.watch_every_cpu(bin_dir)
    try:
        per_round, spans, stretches = measure(exes, a.rounds, cfg, sys.stderr, pairs, ws)
    except RuntimeError as e:
        print("aco_side.py: not run: %s" % e, file=sys.stderr)
        return 1
    held = None if unwatched else held_blocks(spans, stretches)
    rows = pairs_of(per_round, pairs, held)
    print(table(rows))
    print("(each ratio: the median of its blocks judged, each of two rounds, one of each "
          "order, and its 95% interval)")
    print(pace_line(held, a.rounds // 2, unwatched))
    if a.out:
        doc = {"kind": "switchyard-aco-side", "meta": meta.collect(Path(__file__).parents[2]),
               "cpu": meta.cpu_identity(), "thp": thp_mode(),
               "config": dict(cfg, rounds=a.rounds, order="alternating, flipped every round",
                              files="a fresh copy of the program for each process",
                              only=[p[0] for p in pairs] if a.only else "every pair",
                              figure="per block of two rounds, the geometric mean of their "
                                     "ratios"),
               "host_pace": {"watched": unwatched or "every CPU: %d" % len(ws),
                             "stretches": stretches, "round_spans": spans,
                             "held_blocks": held},
               "pairs": rows, "per_round": per_round}
        Path(a.out).write_text(meta.json_text(doc))
    return 0


def pace_line(held, n, unwatched):
    """What the host's pace did to the sitting, in a line."""
    if unwatched:
        return "(the host's pace %s: every block judged)" % unwatched
    k = sum(held)
    if not k:
        return "(the host held no CPU back: every block judged)"
    if not sets_aside(held):
        return ("(the host held a CPU back in %d of %d blocks, too many to set aside: every "
                "block judged)" % (k, n))
    return "(the host held a CPU back in %d of %d blocks: those set aside)" % (k, n)


def thp_mode():
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return "unknown"
    return text[text.index("[") + 1:text.index("]")] if "[" in text else "unknown"


if __name__ == "__main__":
    sys.exit(main())
