"""How plots write a number in text, in one place: each way has its own name, because a
threshold in a rule, a figure in a table and a plain value in a measured line are written
differently (a threshold as written in the claim, a figure to the digits its noise allows, a
value in a given format).

A figure here is the dict plots/figures.py makes (value, unit, low, high, n, exact, bound).
"""


def value_text(v, spec=".3g", unit=""):
    """A plain value in `spec` with its unit appended, "n/a" without one."""
    if v is None:
        return "n/a"
    return format(v, spec) + unit


def threshold_text(x):
    """A threshold as a rule's text prints it: 1.15, 2.0 and 1000 stay as written."""
    return repr(x) if isinstance(x, float) else str(x)


def fraction_text(x):
    """A fraction as a rule's text says it: half, or 0.3x."""
    return "half" if x == 0.5 else f"{x:g}x"


def figure_number(v, exact=False):
    """A figure's number: whole numbers from 100 up (or 1000 for exact counts, which keep four
    digits), three significant digits below."""
    if abs(v) >= (1000 if exact else 100):
        return f"{v:.0f}"
    return f"{v:.4g}" if exact else f"{v:.3g}"


def figure_text(fig):
    """A figure's value and unit, "n/a" for a missing figure or one without a value."""
    v = fig["value"] if fig else None
    if v is None:
        return "n/a"
    return figure_number(v, fig["exact"]) + (f" {fig['unit']}" if fig.get("unit") else "")


def interval_text(fig):
    """The uncertainty after a figure's value: " [low, high] (n=5)", " (exact)" or
    " (n=1, no interval)"; "" for a figure without a value."""
    if not fig or fig.get("value") is None:
        return ""
    if fig["exact"]:
        return " (exact)"
    if fig.get("low") is None:
        return f" (n={fig['n']}, no interval)"
    side = f"; {fig['bound']} this" if fig.get("bound") else ""
    return f" [{figure_number(fig['low'])}, {figure_number(fig['high'])}] (n={fig['n']}{side})"


def figure_with_interval(fig):
    """A figure's value and unit, then its uncertainty (interval_text)."""
    return figure_text(fig) + interval_text(fig)
