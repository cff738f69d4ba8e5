"""The figures of the bias report (``pbtools report``), drawn with matplotlib as inline SVG.

Every figure follows the paper-figure conventions of the project: labelled axes with units,
legends outside the data, and one colour per estimator throughout — :data:`ESTIMATOR_COLOURS`
is the single palette every figure (and the HTML report's legend) takes its colours from.
matplotlib is imported only when a figure is drawn (the optional ``plots`` extra), so the
palette and the labels can be imported without it.

=============================  ==============================================================
function                       draws
=============================  ==============================================================
:func:`topics_figure`          judged and relevant documents per topic, judged share of the top n
:func:`unjudged_figure`        the unjudged share of every run at each cut-off
:func:`bias_figure`            per run: true score and every estimator's score at one cut-off
:func:`error_scatter_figure`   per cut-off: estimate − true against the true score
:func:`errors_figure`          MAE, SRE, SRE*, τ of every estimator per configuration
:func:`svg`                    a figure as an SVG element to inline in HTML
=============================  ==============================================================

Examples
--------
>>> ESTIMATOR_COLOURS["lipani"], estimator_label("webber")
('#1f77b4', 'Webber & Park')
"""

from __future__ import annotations

import functools
import io
import re

import numpy as np
import pandas as pd

from pbtools.corrections.registry import Described

__all__ = [
    "ESTIMATOR_COLOURS",
    "ESTIMATOR_LABELS",
    "ESTIMATOR_MARKERS",
    "POOLED_COLOUR",
    "UNPOOLED_COLOUR",
    "estimator_colour",
    "estimator_label",
    "estimator_marker",
    "measure_label",
    "svg",
    "topics_figure",
    "unjudged_figure",
    "bias_figure",
    "error_scatter_figure",
    "errors_figure",
]

#: the one palette: one colour per estimator (and black for the true score), in every figure —
#: each estimator class's ``colour`` (:class:`pbtools.corrections.registry.Described`, a live
#: view of the registry)
ESTIMATOR_COLOURS = Described("colour")
#: short names of the estimators in legends and sentences (each class's ``label``)
ESTIMATOR_LABELS = Described("label")
#: marker shapes, so that estimators stay apart where their points overlap (each class's
#: ``marker``)
ESTIMATOR_MARKERS = Described("marker")
#: runs that built the pool / runs that did not, in the collection figures (not estimators)
POOLED_COLOUR = "#8c8c8c"
UNPOOLED_COLOUR = "#d62728"

_EXTRA = ("#8c564b", "#e377c2", "#17becf", "#bcbd22")
_CONFIG_TITLES = {"org": "leave-one-organization-out", "run": "leave-one-run-out"}
_RUNSET_TITLES = {"all": "all pooled runs", "top75": "top 75% of the runs"}


def estimator_colour(estimator: str) -> str:
    """The colour of ``estimator`` (its class's, :data:`ESTIMATOR_COLOURS`; for a name not
    registered, or a class without one, a fixed extra colour)."""
    if estimator in ESTIMATOR_COLOURS:
        return ESTIMATOR_COLOURS[estimator]
    return _EXTRA[sum(map(ord, estimator)) % len(_EXTRA)]


def estimator_label(estimator: str) -> str:
    """The short name of ``estimator`` for legends and sentences (its key when unknown)."""
    return ESTIMATOR_LABELS.get(estimator, estimator)


def estimator_marker(estimator: str) -> str:
    """The marker of ``estimator`` in the figures (its class's; ``"o"`` when unknown)."""
    return ESTIMATOR_MARKERS.get(estimator, "o")


def _pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or a clear ImportError."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(
            'the bias report draws its figures with matplotlib: pip install "pbtools[plots]"'
        ) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


_RC = {
    "svg.fonttype": "none",  # text stays text: small, searchable, selectable
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
}


def _styled(draw):
    """Run a figure function under the report's matplotlib style (:data:`_RC`)."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with _pyplot().rc_context(_RC):
            return draw(*args, **kwargs)

    return wrapper


def _figure(width: float, height: float, **kwargs):
    return _pyplot().subplots(figsize=(width, height), layout="constrained", **kwargs)


def svg(fig, name: str) -> str:
    """``fig`` as an ``<svg>`` element to inline in an HTML page (the figure is then closed).

    Every ``id`` of the SVG (clip paths, markers) is prefixed with ``name`` so that several
    figures can share one page; the output is deterministic (no date, fixed hash salt).
    """
    plt = _pyplot()
    buf = io.StringIO()
    with plt.rc_context({**_RC, "svg.hashsalt": name}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{name}-\1"', text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{name}" ', 1)


def _outside_legend(fig, handles, labels, ncol=None):
    """A legend above every axes, outside the data."""
    fig.legend(
        handles,
        labels,
        loc="outside upper center",
        ncol=ncol or len(labels),
        frameon=False,
    )


@_styled
def topics_figure(topics: pd.DataFrame, n: int):
    """Per topic: judged and relevant documents (top) and the judged share of the runs' top
    ``n`` (bottom). ``topics``: ``qid``, ``judged``, ``relevant``, ``judged_share`` (0–1)."""
    t = topics.reset_index(drop=True)
    width = float(np.clip(0.16 * len(t) + 1.5, 6.0, 11.0))
    fig, (top, bottom) = _figure(width, 4.6, nrows=2, sharex=True)
    x = np.arange(len(t))
    top.bar(x, t["judged"], color="#c7c7c7", label="judged documents")
    top.bar(x, t["relevant"], color="#4d4d4d", label="relevant documents")
    top.set_ylabel("documents per topic")
    bottom.bar(x, 100 * t["judged_share"], color=POOLED_COLOUR)
    mean = 100 * float(t["judged_share"].mean())
    line = bottom.axhline(mean, color="#000000", lw=1, ls="--")
    bottom.set_ylim(0, 105)
    bottom.set_ylabel(f"judged share of\nthe runs' top {n} (%)")
    bottom.set_xlabel("topic")
    bottom.set_xticks(x, t["qid"].astype(str), rotation=90, fontsize=7)
    bottom.set_xlim(-0.7, len(t) - 0.3)
    handles, labels = top.get_legend_handles_labels()
    _outside_legend(fig, [*handles, line], [*labels, f"mean judged share ({mean:.1f}%)"], ncol=3)
    return fig


@_styled
def unjudged_figure(unjudged: pd.DataFrame):
    """The unjudged share of every run's top n at each cut-off (one line per run).

    ``unjudged``: ``name``, ``n``, ``value`` (Unjudged@n, 0–1), ``pooled`` (bool). Pooled runs
    are grey; unpooled runs are red and named at the right end of their line."""
    fig, ax = _figure(8.0, 3.6)
    cutoffs = sorted(unjudged["n"].unique())
    wide = unjudged.pivot_table(index="name", columns="n", values="value", observed=True)
    pooled = unjudged.groupby("name", observed=True)["pooled"].first()
    for name, row in wide.iterrows():
        is_pooled = bool(pooled[name])
        ax.plot(
            cutoffs,
            100 * row[cutoffs].to_numpy(),
            color=POOLED_COLOUR if is_pooled else UNPOOLED_COLOUR,
            lw=1.0 if is_pooled else 1.8,
            alpha=0.7 if is_pooled else 1.0,
            marker="o",
            ms=3,
            zorder=1 if is_pooled else 2,
        )
    ax.set_xscale("log")
    ax.set_xticks(cutoffs, [str(n) for n in cutoffs])
    ax.minorticks_off()
    ax.set_xlabel("cut-off n (documents, log scale)")
    ax.set_ylabel("unjudged share of the top n (%)")
    ax.set_ylim(bottom=0)
    from matplotlib.lines import Line2D

    counts = pooled.value_counts()
    handles = [
        Line2D([], [], color=POOLED_COLOUR, marker="o", ms=3),
        Line2D([], [], color=UNPOOLED_COLOUR, marker="o", ms=3, lw=1.8),
    ]
    labels = [
        f"run that built the pool ({int(counts.get(True, 0))})",
        f"run outside the pool ({int(counts.get(False, 0))})",
    ]
    _outside_legend(fig, handles, labels)
    # name the unpooled runs beside their last point, spread so that labels do not overlap
    last = wide.loc[~pooled.reindex(wide.index).astype(bool), cutoffs[-1]] * 100
    if len(last):
        ymax = max(float(wide.max().max()) * 100, 1.0)
        spread = _spread(last.sort_values(), 0.06 * ymax)
        for name, y in spread.items():
            ax.annotate(
                str(name),
                (cutoffs[-1], last[name]),
                xytext=(cutoffs[-1] * 1.08, y),
                fontsize=8,
                color=UNPOOLED_COLOUR,
                va="center",
                arrowprops={"arrowstyle": "-", "color": UNPOOLED_COLOUR, "lw": 0.5},
            )
        ax.set_xlim(right=cutoffs[-1] * 1.7)
    return fig


def _precision_depth(measure: str) -> int | None:
    """n of a ``P@n`` measure name, None for any other measure."""
    m = re.fullmatch(r"P@(\d+)", measure)
    return int(m.group(1)) if m else None


def measure_label(measure: str) -> str:
    """An axis label of a measure's score, with its unit where it has a plain one.

    >>> measure_label("P@10"), measure_label("nDCG@10")
    ('P@10 (share of the top 10 that is relevant)', 'nDCG@10 (score, 0–1)')
    """
    n = _precision_depth(measure)
    return f"{measure} (share of the top {n} that is relevant)" if n else f"{measure} (score, 0–1)"


def _spread(ys: pd.Series, gap: float) -> pd.Series:
    """Sorted label positions moved apart to at least ``gap`` (upwards)."""
    out = ys.to_numpy(dtype=float).copy()
    for i in range(1, len(out)):  # a handful of unpooled runs
        out[i] = max(out[i], out[i - 1] + gap)
    return pd.Series(out, index=ys.index)


def _estimator_handles(estimators, with_true=True):
    from matplotlib.lines import Line2D

    keys = (["true"] if with_true else []) + list(estimators)
    handles = [
        Line2D(
            [],
            [],
            ls="none",
            marker=estimator_marker(k),
            color=estimator_colour(k),
            ms=6,
        )
        for k in keys
    ]
    return handles, [estimator_label(k) for k in keys]


@_styled
def bias_figure(scores: pd.DataFrame, measure: str, estimators):
    """Per evaluated run (best on top), on ``measure``: its true and reduced-pool scores
    (left), and every estimator's error, estimate − true (right).

    ``scores``: one configuration's rows (``name``, ``measure``, ``estimator``, ``true``,
    ``estimate``) as in :attr:`Analysis.scores`. The gap between the black diamond and the
    green dot is what the run lost because its organization (or itself) was not pooled; on the
    right, the closer to zero the better the estimator."""
    sel = scores[scores["measure"] == measure]
    wide = sel.pivot_table(index="name", columns="estimator", values="estimate", observed=True)
    true = sel.groupby("name", observed=True)["true"].first()
    order = true.sort_values(kind="stable").index
    wide, true = wide.reindex(order), true.reindex(order)
    ests = [e for e in estimators if e in wide.columns]
    fig, (left, right) = _figure(
        9.0,
        0.2 * len(order) + 1.5,
        ncols=2,
        sharey=True,
        gridspec_kw={"width_ratios": [1, 1.2]},
    )
    fig.get_layout_engine().set(wspace=0.08)  # keep the two x-axes' tick labels apart
    y = np.arange(len(order))
    t = true.to_numpy()
    if "reduced" in ests:
        red = wide["reduced"].to_numpy()
        left.hlines(y, np.minimum(t, red), np.maximum(t, red), color="#c8c8c8", lw=2, zorder=1)
        left.scatter(red, y, **_marker("reduced"), zorder=3)
    left.scatter(t, y, **_marker("true"), zorder=4)
    left.set_yticks(y, [str(v) for v in order], fontsize=7)
    left.set_ylim(-0.7, len(order) - 0.3)
    left.set_xlabel(measure_label(measure))
    left.set_ylabel("run (sorted by true score)")
    left.grid(axis="x", color="#eeeeee", zorder=0)
    right.axvline(0, color=ESTIMATOR_COLOURS["true"], lw=0.8, zorder=1)
    offsets = np.linspace(-0.22, 0.22, len(ests)) if len(ests) > 1 else [0.0]
    for e, dy in zip(ests, offsets, strict=True):
        right.scatter(wide[e].to_numpy() - t, y + dy, **_marker(e), zorder=3)
    right.xaxis.set_major_locator(_pyplot().MaxNLocator(6))
    right.set_xlabel(f"estimate − true score (difference in {measure})")
    right.grid(axis="x", color="#eeeeee", zorder=0)
    right.tick_params(axis="y", length=0)
    _outside_legend(fig, *_estimator_handles(ests))
    return fig


def _marker(key: str) -> dict:
    """Scatter keywords of ``key``'s points (colour and shape from the palette)."""
    return {
        "s": 22,
        "color": estimator_colour(key),
        "marker": estimator_marker(key),
        "lw": 0,
    }


@_styled
def error_scatter_figure(scores: pd.DataFrame, estimators):
    """Per measure: each run's estimate − true score against its true score, per estimator.

    ``scores``: one configuration's rows as in :attr:`Analysis.scores`. Points below the zero
    line are runs the estimator scores too low."""
    names = [str(m) for m in dict.fromkeys(scores["measure"])]
    ests = [e for e in estimators if e in set(scores["estimator"])]
    fig, axes = _figure(min(2.6 * len(names) + 0.6, 12.0), 3.0, ncols=len(names))
    axes = np.atleast_1d(axes)
    for ax, measure in zip(axes, names, strict=True):
        sel = scores[scores["measure"] == measure]
        ax.axhline(0, color="#000000", lw=0.8)
        for e in ests:
            s = sel[sel["estimator"] == e]
            ax.scatter(
                s["true"],
                s["estimate"] - s["true"],
                s=14,
                color=estimator_colour(e),
                marker=estimator_marker(e),
                alpha=0.85,
                lw=0,
            )
        ax.set_title(measure)
        ax.set_xlabel(f"true {measure}")
    axes[0].set_ylabel("estimate − true score\n(difference in the measure)")
    _outside_legend(fig, *_estimator_handles(ests, with_true=False))
    return fig


_ERROR_ROWS = (
    ("mae", "MAE (score units)"),
    ("sre", "SRE (rank positions)"),
    ("sre_star", "SRE* (significant\nrank positions)"),
    ("tau", "Kendall's τ-b"),
)


@_styled
def errors_figure(errors: pd.DataFrame, estimators):
    """MAE, SRE, SRE* and Kendall's τ-b (rows) against the cut-off, per configuration
    (columns), one line per estimator. ``errors``: as :attr:`Analysis.errors`."""
    configs = list(
        errors[["leave_out", "runs"]].drop_duplicates().itertuples(index=False, name=None)
    )
    ests = [e for e in estimators if e in set(errors["estimator"])]
    names = [str(m) for m in dict.fromkeys(errors["measure"])]
    depths = [_precision_depth(m) for m in names]
    fig, axes = _figure(
        min(2.9 * len(configs) + 1.0, 12.0),
        2.0 * len(_ERROR_ROWS) + 0.6,
        nrows=len(_ERROR_ROWS),
        ncols=len(configs),
        sharex=True,
        sharey="row",
        squeeze=False,
    )
    x = np.arange(len(names))
    for j, (by, runs) in enumerate(configs):
        cfg = errors[(errors["leave_out"] == by) & (errors["runs"] == runs)]
        axes[0, j].set_title(f"{_CONFIG_TITLES.get(by, by)}\n{_RUNSET_TITLES.get(runs, runs)}")
        for i, (col, label) in enumerate(_ERROR_ROWS):
            ax = axes[i, j]
            for e in ests:
                s = cfg[cfg["estimator"] == e].set_index("measure")[col].reindex(names)
                ax.plot(
                    x,
                    s.to_numpy(dtype=float),
                    color=estimator_colour(e),
                    marker=estimator_marker(e),
                    ms=4,
                    lw=1.4,
                )
            ax.grid(axis="y", color="#eeeeee")
            if j == 0:
                ax.set_ylabel(label)
        if None not in depths:  # all P@n: the cut-off is the axis
            axes[-1, j].set_xticks(x, [str(n) for n in depths])
            axes[-1, j].set_xlabel("cut-off n of P@n (documents)")
        else:
            axes[-1, j].set_xticks(x, names, rotation=30, ha="right")
            axes[-1, j].set_xlabel("measure")
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color=estimator_colour(e), marker=estimator_marker(e), ms=4) for e in ests
    ]
    _outside_legend(fig, handles, [estimator_label(e) for e in ests])
    return fig
