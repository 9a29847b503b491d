"""The reference column: the committed reference run's verdicts and figures set beside a
run's, so a reader sees at once what differs from the machine the README quotes."""
from pathlib import Path

import data as D
import figures as F
from formatting import figure_number, figure_with_interval

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference"


def reference_for(folder, ref_dir=REFERENCE):
    """The committed reference run to set beside `folder`'s figures, or None when `folder`
    is the reference itself or the reference holds no data."""
    ref_dir = Path(ref_dir)
    if not ref_dir.is_dir() or Path(folder).resolve() == ref_dir.resolve():
        return None
    ref = D.Run(ref_dir)
    return ref if ref.data else None


def reference_line(reference):
    """The machine line naming the reference once, for the machine section."""
    return (f"- reference column: the committed run in `results/reference` "
            f"({D.machine_line(reference)}, preset "
            f"`{(reference.get('suite') or {}).get('preset', '?')}`)")


def fig_text(fig):
    """A figure with its interval as a table cell says it; one never measured (n=0: an
    estimate that only bounds it, as a fall after a peak with no ok level after it) says
    so instead of looking like a measurement of 1 with an interval."""
    if fig and fig.get("n") == 0 and fig.get("low") is not None:
        return (f"not measured: anywhere in [{figure_number(fig['low'])}, "
                f"{figure_number(fig['high'])}]")
    return figure_with_interval(fig)


def figure_table(figures, ref_figures=None):
    """The figures a rule read, as a table of value [95% interval] (n); the ones the rule
    compared with its thresholds in bold. With a reference, its figure of the same name in a
    column beside ("n/a" where the reference did not measure it)."""
    # A claim this run could not measure still shows the reference's figures, beside n/a.
    shown = F.names(figures, ref_figures if not figures else None)
    if not shown:
        return []
    head = "| figure | this run |" + (" reference |" if ref_figures is not None else "")
    out = [head, "|---|---|" + ("---|" if ref_figures is not None else "")]
    mine, ref = F.by_name(figures), F.by_name(ref_figures)
    # Figures with the same value, interval and n share a row (C6 reads one ratio against
    # two baselines that are often the same level: two names, one measurement), the ones the
    # rule compared apart from the others (REPORT.md keeps only the former's rows).
    rows = {}
    for name in shown:
        f = mine.get(name)
        label = f"**{name}**" if f and f.get("decides") else name
        cells = f" {fig_text(f)} |"
        if ref_figures is not None:
            cells += f" {fig_text(ref.get(name))} |"
        rows.setdefault((cells, label.startswith("**")), []).append(label)
    out += [f"| {'; '.join(labels)} |{cells}" for (cells, _), labels in rows.items()]
    return out + ["", "In bold: the figures the rule compared with its thresholds. In "
                  f"brackets: the {F.LEVEL:.0%} interval of the median over the repetitions "
                  "or rounds, n of them; `exact`: a deterministic count.", ""]
