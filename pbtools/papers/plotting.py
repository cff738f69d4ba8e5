"""What the paper scripts' figures share: matplotlib on the Agg backend with one style, the three
formats every figure is written in, legends outside the axes, log axes with plain ticks, and
whether matplotlib is installed at all (a core install writes the tables and claims without
figures).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def can_draw() -> bool:
    """Whether matplotlib is installed; if not, say once that the figures are left out (the
    tables and claims are written all the same: a core install reproduces a paper's numbers)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(
            'figures not drawn: matplotlib is not installed (pip install "pbtools[plots]"); '
            "the tables and claims are written",
            file=sys.stderr,
        )
        return False
    return True


#: the formats every figure is written in
FIGURE_FORMATS = ("png", "pdf", "svg")


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend, with the paper-figure style
    (small serif-free fonts, light grid, no top/right spines)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 9,
            "axes.titlesize": 9,
            "axes.labelsize": 9,
            "legend.fontsize": 8,
            "xtick.labelsize": 8,
            "ytick.labelsize": 8,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
            "svg.fonttype": "none",
            "pdf.fonttype": 42,
        }
    )
    return plt


def save_figure(fig, out: Path, stem: str) -> list[Path]:
    """Write ``fig`` as ``out/stem.{png,pdf,svg}`` (tight bounding box, so titles and legends
    outside the axes are kept) and close it."""
    paths = []
    for fmt in FIGURE_FORMATS:
        path = Path(out) / f"{stem}.{fmt}"
        fig.savefig(path, dpi=150, bbox_inches="tight")
        paths.append(path)
    fig.clf()
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths


def legend_outside(ax, where: str = "right", **kw):
    """A legend beside (``where="right"``) or below (``"below"``) the axes ``ax`` (or a
    figure), never over the data."""
    if where == "right":
        return ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), **kw)
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), **kw)


def matplotlib_null_locator():
    """A locator that places no ticks (for the minor ticks of a labelled symlog axis)."""
    from matplotlib.ticker import NullLocator

    return NullLocator()


def log_ticks(ax, ticks, axis: str = "x") -> None:
    """A log axis labelled at ``ticks`` only (plain numbers, no minor labels): readable where
    matplotlib's default would print overlapping 10^k and minor labels."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    a = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    a.set_major_locator(FixedLocator(list(ticks)))
    a.set_major_formatter(lambda v, _pos: f"{v:g}")
    a.set_minor_locator(NullLocator())
    a.set_minor_formatter(NullFormatter())


def plot_suffix(frame: pd.DataFrame, track: str) -> str:
    """Plot file-name suffix of ``track``: empty when ``frame`` has one track, else
    ``_<track>`` with ``/`` as ``_``."""
    return "" if frame["track"].nunique() == 1 else "_" + track.replace("/", "_")
