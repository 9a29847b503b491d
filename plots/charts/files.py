"""A chart written to disk, as every chart of plots/ (history's and compare's too) is: a PNG for
Markdown and a browser, an SVG for REPORT.html to inline, from the same figure, which is then
closed (pyplot keeps every open figure otherwise)."""
import matplotlib.pyplot as plt

PNG_DPI = 110  # the PNGs' resolution: a 10-inch chart is 1100 pixels wide


def write_png_svg(fig, stem_path, png_dpi=PNG_DPI, svg_dpi=None):
    """stem_path.png and stem_path.svg of fig (stem_path without a suffix; a dot in its name
    stays). Artists' gids name them for the tests (member:<name>, threshold:<claim>); in an SVG
    each would become an element id, repeated within a chart, and REPORT.html inlines every
    chart: they are dropped before the SVG is written."""
    fig.savefig(f"{stem_path}.png", dpi=png_dpi)
    for artist in fig.findobj(lambda a: a.get_gid() is not None):
        artist.set_gid(None)
    fig.savefig(f"{stem_path}.svg", dpi=svg_dpi)
    plt.close(fig)
