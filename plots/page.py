"""REPORT.html: the parts plots/document.py assembles for REPORT.md, rendered as one page
that opens offline: a contents list, a summary table linking each claim to its section and
charts, every chart inline as SVG, and a glossary. Nothing is loaded from elsewhere (no
script, no web font, no image file), so the page can be mailed or opened from a USB stick.

The parts' text is Markdown of a small subset (headings, paragraphs, two-level lists, tables,
a chart image alone on its line, `code`, **bold** and links); `blocks` converts exactly that
subset and escapes all text. The verdict table gains a column linking each claim's charts,
and the chart list links to the charts drawn on the page instead of to the files."""
import html
import re

import document
import glossary
import summary
import verdict as V

CSS = """
body { font: 16px/1.5 system-ui, sans-serif; color: #222; margin: 0 auto; max-width: 72rem;
       padding: 0 1.5rem 4rem; }
h1 { margin-top: 1.5rem; } h2 { border-bottom: 1px solid #ccc; margin-top: 2.5rem; }
code { background: #f2f2f2; padding: 0 .2em; border-radius: 3px; font-size: 90%; }
table { border-collapse: collapse; margin: .8rem 0; }
.scroll { overflow-x: auto; max-width: 100%; }
td, li, p, h1, h2, h3, dd, figcaption { overflow-wrap: break-word; }
code { overflow-wrap: anywhere; }
.summary table { font-size: 80%; line-height: 1.35; }
.glance a { display: inline-block; margin: 0 .5rem .2rem 0; text-decoration: none; }
details { margin: .6rem 0; } details > summary { cursor: pointer; }
details.claim > summary { font-size: 1.15rem; padding: .3rem 0; border-bottom: 1px solid #ccc; }
@media (max-width: 40rem) { body { padding: 0 .6rem 3rem; } nav ol { columns: 1; } }
th, td { border: 1px solid #ccc; padding: .2rem .5rem; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
figure { margin: 1rem 0; } figure svg { width: 100%; height: auto; }
figcaption { color: #555; font-size: 90%; }
nav ol { columns: 2; } dt { font-weight: bold; margin-top: .6rem; } dd { margin-left: 1.5rem; }
.verdict { font-weight: bold; white-space: nowrap; }
.holds { color: #1a7f37; } .partly { color: #9a6700; } .not { color: #cf222e; }
.notrun { color: #6e7781; } .inconclusive { color: #8250df; }
"""
VERDICT_CLASS = {V.HOLDS: "holds", V.PARTLY: "partly", V.NOT: "not",
                 V.INCONCLUSIVE: "inconclusive", V.NOTRUN: "notrun"}
IMAGE = re.compile(r"!\[[^\]]*\]\(([\w-]+)\.png\)")
INLINE = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|\[([^\]]+)\]\(([^)\s]+)\)")
RULE_ROW = re.compile(r"\|(\s*:?-+:?\s*\|)+")
LIST_ITEM = re.compile(r"( *)- (.*)")
CLAIM_ROW = re.compile(r"\| \[([^\]]+)\]\(#")
ESC = html.escape


def slug(title):
    """The anchor GitHub gives a heading, so the Markdown's own links (#c1) work here too."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def inline(text):
    """Escaped HTML of one line's text with its code spans, bold and links."""
    out, at = [], 0
    for m in INLINE.finditer(text):
        out.append(ESC(text[at:m.start()]))
        code, bold, label, href = m.groups()
        if code is not None:
            out.append(f"<code>{ESC(code)}</code>")
        elif bold is not None:
            out.append(f"<strong>{inline(bold)}</strong>")
        else:
            out.append(f'<a href="{ESC(href)}">{inline(label)}</a>')
        at = m.end()
    return "".join(out) + ESC(text[at:])


def cell(text):
    """A table cell; a verdict gets its colour wherever a table shows one."""
    kind = VERDICT_CLASS.get(text)
    return f'<td class="verdict {kind}">{ESC(text)}</td>' if kind else f"<td>{inline(text)}</td>"


def table(rows):
    cells = [r.strip().strip("|").split("|") for r in rows if not RULE_ROW.fullmatch(r.strip())]
    head = "".join(f"<th>{inline(c.strip())}</th>" for c in cells[0])
    body = "".join("<tr>" + "".join(cell(c.strip()) for c in row) + "</tr>" for row in cells[1:])
    # A wide table scrolls inside its own box, never the page.
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            "</table></div>")


def bullet_list(items):
    """Nested <ul> from "- " items indented by two spaces per level."""
    out, depth = [], 0
    for line in items:
        indent, text = LIST_ITEM.fullmatch(line).groups()
        level = len(indent) // 2 + 1
        if level > depth:
            out += ["<ul><li>"] * (level - depth)
        else:
            out += ["</li></ul>"] * (depth - level) + ["</li><li>"]
        out.append(inline(text))
        depth = level
    return "".join(out + ["</li></ul>"] * depth)


def kind_of(line):
    return ("blank" if not line.strip() else "head" if line.startswith("#")
            else "table" if line.startswith("|") else "list" if LIST_ITEM.fullmatch(line)
            else "image" if IMAGE.fullmatch(line) else "text")


def blocks(lines, figure):
    """HTML of Markdown lines of the report's subset; figure(stem) draws a chart image."""
    out, i = [], 0
    while i < len(lines):
        line, kind, j = lines[i], kind_of(lines[i]), i + 1
        if kind in ("table", "list", "text"):  # these run on over the lines of their kind
            while j < len(lines) and kind_of(lines[j]) == kind:
                j += 1
        if kind == "head":
            level, title = len(line) - len(line.lstrip("#")), line.lstrip("#").strip()
            out.append(f'<h{level} id="{ESC(slug(title))}">{inline(title)}</h{level}>')
        elif kind == "table":
            out.append(table(lines[i:j]))
        elif kind == "list":
            out.append(bullet_list(lines[i:j]))
        elif kind == "image":
            out.append(figure(IMAGE.fullmatch(line).group(1)))
        elif kind == "text":
            out.append("<p>" + " ".join(inline(t) for t in lines[i:j]) + "</p>")
        i = j
    return "\n".join(out)


SVG_PROLOGUE = re.compile(r"\A.*?(?=<svg)", re.S)
SVG_METADATA = re.compile(r"<metadata>.*?</metadata>", re.S)
SVG_SIZE = re.compile(r'(<svg[^>]*?) width="[^"]*" height="[^"]*"')


def inline_svg(text, prefix):
    """A chart's SVG file as an element of the page: its XML prologue and metadata dropped,
    its size left to the page's CSS, and its ids prefixed, since every matplotlib figure
    names its clip paths and glyphs alike and ids must be unique in one document."""
    text = SVG_METADATA.sub("", SVG_PROLOGUE.sub("", text, count=1), count=1)
    text = SVG_SIZE.sub(r"\1", text, count=1)
    text = re.sub(r">\s+<", "><", text)  # matplotlib's indentation: a tenth of the page
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}\1"', text)
    return re.sub(r'(href="#|url\(#)([^")]+)', rf"\1{prefix}\2", text)


class Figures:
    """Draws each chart of the run inline once, where it is first shown, with its anchor
    (fig-<stem>) for the summary table's links; a later section that shows the same chart
    links back to it rather than carrying another copy of the SVG."""

    def __init__(self, run):
        import charts  # matplotlib (half a second) only for a page that gets written
        self.run, self.shown = run, set()
        self.titles = {stem: charts.title(stem, text) for stem, text, _ in charts.CHARTS}

    def __call__(self, stem):
        title = ESC(self.titles.get(stem, stem))
        if stem in self.shown:
            return (f'<p class="chart-ref" data-chart="{ESC(stem)}">Chart: '
                    f'<a href="#fig-{ESC(stem)}">{title}</a> (shown above)</p>')
        self.shown.add(stem)
        path = self.run.dir / f"{stem}.svg"
        body = (inline_svg(path.read_text(), f"{stem}-") if path.exists()
                else f"<p>not run: {ESC(stem)}.svg is not in this run folder</p>")
        return (f'<figure id="fig-{ESC(stem)}" data-chart="{ESC(stem)}">{body}<figcaption>'
                f'{title}: <a href="{ESC(stem)}.png">PNG</a>, '
                f'<a href="{ESC(stem)}.svg">SVG</a></figcaption></figure>')


def verdict_cell(result, tag="td"):
    v = result["verdict"] if result else "n/a"
    return f'<{tag} class="verdict {VERDICT_CLASS.get(v, "")}">{ESC(v)}</{tag}>'


def with_charts(report, drawn):
    """The verdict part's own table (whatever columns it has) with a column more: each
    claim's charts, linked to where the page draws them."""
    by_id = {p.claim.ID: p.claim for p in report.parts if p.claim}
    out, head = [], False
    for line in report.parts[[p.kind for p in report.parts].index("verdicts")].lines:
        row = CLAIM_ROW.match(line)
        if line.startswith(summary.GLANCE):
            line = glance(report)
        elif line.startswith("| claim |"):
            line, head = line + " charts |", True
        elif head and RULE_ROW.fullmatch(line):
            line, head = line + "---|", False
        elif row and row.group(1) in by_id:
            stems = [s for s in by_id[row.group(1)].CHARTS if s in drawn]
            line += " " + (", ".join(f"[{s}](#fig-{s})" for s in stems) or "none drawn") + " |"
        out.append(line)
    return out


def glance(report):
    """Every claim's verdict in one line, coloured, each linked to its section: the first
    screen shows them all, the table's rows below."""
    return ('<p class="glance"><strong>At a glance:</strong> ' + " ".join(
        f'<a href="#{ESC(cid.lower())}">{ESC(cid)} {verdict_cell(r, "span")}</a>'
        for cid, r in report.results.items()) + "</p>")


def all_charts(figures, drawn):
    """Every chart linked by its title; a chart no section shows is drawn here."""
    items, unshown = [], []
    for stem in drawn:
        if stem not in figures.shown:
            unshown.append(stem)
        items.append(f'<li><a href="#fig-{ESC(stem)}">{ESC(figures.titles.get(stem, stem))}'
                     f"</a></li>")
    return ('<h2 id="all-charts">All charts</h2><ul>' + "".join(items) + "</ul>"
            + "".join(figures(stem) for stem in unshown))


def glossary_section():
    terms = "".join(f"<dt>{ESC(t)}</dt><dd>{ESC(d)}</dd>" for t, d in glossary.TERMS)
    return f'<h2 id="glossary">Glossary</h2><dl>{terms}</dl>'


def title_of(part):
    return part.lines[0].lstrip("#").strip()


def contents(report):
    items = []
    for p in report.parts:
        t = title_of(p)
        extra = " " + verdict_cell(report.results[p.claim.ID], "span") if p.claim else ""
        items.append(f'<li><a href="#{ESC(slug(t))}">{inline(t)}</a>{extra}</li>')
    items.append('<li><a href="#glossary">Glossary</a></li>')
    return '<nav><h2 id="contents">Contents</h2><ol>' + "".join(items) + "</ol></nav>"


def claim_details(report, part, figures):
    """A claim's part, collapsed under a line with its id, its claim in brief and its
    verdict; a link to the claim (#c1) opens it."""
    c = part.claim
    brief = getattr(c, "BRIEF", "")
    return (f'<section><details class="claim" id="claim-{ESC(c.ID.lower())}"><summary>'
            f"<strong>{ESC(c.ID)}</strong> {ESC(brief)} "
            f"{verdict_cell(report.results[c.ID], 'span')}</summary>"
            f"{blocks(part.lines, figures)}<p>This claim on a page of its own: "
            f'<a href="{claim_page_name(c.ID)}">{claim_page_name(c.ID)}</a></p>'
            "</details></section>")


def points_details(lines, figures):
    """The non-ok points: their counts shown, their rows (from the first ### heading on)
    collapsed."""
    cut = next((i for i, ln in enumerate(lines) if ln.startswith("### ")), len(lines))
    rows = (f"<details><summary>Every point that is not ok, by status</summary>"
            f"{blocks(lines[cut:], figures)}</details>" if cut < len(lines) else "")
    return f"<section>{blocks(lines[:cut], figures)}{rows}</section>"


def claim_page_name(cid):
    return f"claim-{cid}.html"


def claim_page(report, part):
    """One claim's page (claim-C13.html): its whole section, every measured table and
    figure, its charts from the run folder's SVG files, and a link back to the report."""
    c = part.claim
    chart = (lambda stem: f'<figure><img src="{ESC(stem)}.svg" alt="{ESC(stem)}" '
             f'style="width:100%"><figcaption>{ESC(stem)}</figcaption></figure>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{ESC(c.ID)} - {ESC(document.TITLE)}</title><style>{CSS}</style></head>"
            f'<body>\n<p><a href="REPORT.html#{ESC(c.ID.lower())}">Back to the report</a> '
            f"({verdict_cell(report.results[c.ID], 'span')})</p>\n"
            f"<section>{blocks(part.lines, chart)}</section>\n</body></html>\n")


def render(report):
    """REPORT.html's text for the parts document.build gave: the summary first (it fills the
    first screen), then the contents, then every part."""
    figures, drawn = Figures(report.run), document.drawn_charts(report.run)
    body = []
    for p in report.parts:
        if p.kind == "verdicts":
            lines = with_charts(report, drawn)
            at = next(i for i, ln in enumerate(lines) if ln.startswith('<p class="glance">'))
            body.append(f'<section class="summary">{blocks(lines[:at], figures)}{lines[at]}'
                        f"{blocks(lines[at + 1:], figures)}</section>")
            body.append(contents(report))
        elif p.claim is not None:
            body.append(claim_details(report, p, figures))
        elif p.lines[0] == "## Points that are not ok":
            body.append(points_details(p.lines, figures))
        elif p.kind == "charts":
            body.append(all_charts(figures, drawn))
        else:
            body.append(f"<section>{blocks(p.lines, figures)}</section>")
    body.append(glossary_section())
    host = (report.run.meta() or {}).get("host", "")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{ESC(document.TITLE)}{' - ' + ESC(host) if host else ''}</title>"
            f"<style>{CSS}</style></head><body>\n"
            f"<h1>{ESC(document.TITLE)}</h1><p>{inline(document.INTRO)} "
            "The same report as text: <a href=\"REPORT.md\">REPORT.md</a>.</p>\n"
            + "\n".join(body) + "\n</body></html>\n")
