#!/usr/bin/python3
"""plots/ imports run one way (data, figures, claims, then charts and the report sections,
then the document, compare, the page and the command line), without a cycle, and no module
outgrows a reader: every non-test Python file stays within 500 lines. harness/'s modules are
reached through plots/harness_api.py alone, and no plots module changes sys.path."""
import ast
import unittest
from pathlib import Path

PLOTS = Path(__file__).resolve().parent.parent
HARNESS = PLOTS.parent / "harness"
MAX_LINES = 500
# The one module that imports harness/'s (on the PYTHONPATH beside plots/).
HARNESS_API = "harness_api"

# Each module's layer: a module imports only from lower layers, or from its own package.
LAYERS = [
    {"harness_api", "formatting"},
    {"validate", "pointdata", "peerdata"},
    {"data", "export"},
    {"figures"},
    {"switch_figures"},
    {"verdict"},
    {"claims"},
    {"charts", "sections", "reference", "glossary"},
    {"claims_table", "bands"},
    {"compare_diff"},
    {"summary", "compare_charts", "history_charts"},
    {"document"},
    {"page"},
    {"report", "slides", "compare", "history"},
]


def modules(root=PLOTS):
    """{dotted name: path} of every Python module under plots/, tests left out."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] == "tests":
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(path, known):
    """The plots modules a file imports: `import a.b`, `from a import b` (b a module when
    a/b.py exists) and importlib.import_module(f"pkg.{...}") (every module of pkg)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" \
                and node.args and isinstance(node.args[0], ast.JoinedStr):
            head = node.args[0].values[0]
            if isinstance(head, ast.Constant):
                pkg = head.value.rstrip(".")
                found |= {m for m in known if m.startswith(pkg + ".")}
    return {m for m in found if m in known}


def top_names(path):
    """The top-level names a file imports (`a` of `import a.b` and `from a.b import c`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def harness_modules(root=HARNESS):
    """The names harness/ offers on the path: its modules and its packages."""
    return {p.stem for p in root.glob("*.py")} | \
        {p.parent.name for p in root.glob("*/__init__.py") if p.parent.name != "tests"}


def graph(root=PLOTS):
    known = modules(root)
    return {m: imports(p, known) - {m} for m, p in known.items()}


def cycle(g):
    """One import cycle as a list of modules, or None."""
    state = {}

    def visit(m, stack):
        state[m] = "open"
        for n in sorted(g.get(m, ())):
            if state.get(n) == "open":
                return stack[stack.index(n):] + [n] if n in stack else [m, n]
            if n not in state:
                found = visit(n, stack + [n])
                if found:
                    return found
        state[m] = "done"
        return None
    for m in sorted(g):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


def layer(module):
    top = module.split(".")[0]
    return next(i for i, names in enumerate(LAYERS) if top in names)


class Layout(unittest.TestCase):
    def test_no_import_cycle(self):
        self.assertIsNone(cycle(graph()))

    def test_imports_run_one_way(self):
        wrong = [f"{m} (layer {layer(m)}) imports {n} (layer {layer(n)})"
                 for m, deps in graph().items() for n in deps
                 if n.split(".")[0] != m.split(".")[0] and layer(n) >= layer(m)]
        self.assertEqual(wrong, [])

    def test_every_module_has_a_layer(self):
        for m in modules():
            layer(m)  # StopIteration names a module no layer lists

    def test_files_stay_small(self):
        big = {str(p.relative_to(PLOTS)): n for p in modules().values()
               if (n := len(p.read_text().splitlines())) > MAX_LINES}
        self.assertEqual(big, {})

    def test_harness_reached_through_one_module(self):
        offered = harness_modules()
        self.assertIn("lib", offered)  # the finder sees harness/'s packages
        wrong = {m: sorted(top_names(p) & offered) for m, p in modules().items()
                 if m != HARNESS_API and top_names(p) & offered}
        self.assertEqual(wrong, {})

    def test_no_module_changes_the_path(self):
        changed = [m for m, p in modules().items() if "sys.path" in p.read_text()]
        self.assertEqual(changed, [])

    def test_the_cycle_finder_finds_one(self):
        self.assertEqual(cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}))


if __name__ == "__main__":
    unittest.main()
