"""Webber & Park (2009): the figures and the terminal report of :mod:`pbtools.papers.webber2009`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pbtools.papers import common as _common
from pbtools.papers.webber2009_claims import NO_MANUAL

#: one colour per estimator in every figure: (table's lists, estimator) → colour, label
STYLE = {
    ("irrelevant", "unadjusted"): ("#d95f02", "unadjusted, unjudged = irrelevant"),
    ("condensed", "unadjusted"): ("#1b9e77", "unadjusted, condensed lists"),
    ("irrelevant", "adjusted_runs"): ("#7570b3", "adjusted from systems (Alg. 1)"),
    ("irrelevant", "adjusted"): ("#e7298a", "adjusted from common topics (Alg. 2)"),
    ("condensed", "adjusted"): ("#e7298a", "adjusted from common topics (Alg. 2)"),
    ("irrelevant", "mixed"): ("#66a61e", "true scores mixed in"),
    ("condensed", "mixed"): ("#66a61e", "true scores mixed in"),
}


def figures(result: dict[str, pd.DataFrame], out: Path) -> None:
    """The figures ``figure1``, ``table1``, ``table2``, ``table3`` (PNG, PDF, SVG)."""
    plt = _common.pyplot()
    err, bias = result["errors"], result["bias"]
    if "part" in err.columns:  # the figures show the paper's main experiment (Table 1 left)
        err = err[err["part"] == "all"]
    for track, m in err.groupby("track", sort=False):
        suffix = _common.plot_suffix(err, track)
        widths = sorted(m["width"].unique())
        # Figure 1
        bt = bias[bias["track"] == track]
        fig, ax = plt.subplots(figsize=(6, 3.4))
        for lists, off in (("irrelevant", -0.04), ("condensed", 0.04)):
            g = bt[bt["lists"] == lists].sort_values("width")
            colour, label = STYLE[(lists, "unadjusted")]
            x = g["width"].to_numpy() * (1 + off)
            ax.errorbar(
                x,
                g["median"],
                yerr=[g["median"] - g["q1"], g["q3"] - g["median"]],
                fmt="none",
                ecolor=colour,
                elinewidth=6,
                alpha=0.35,
            )
            ax.plot(x, g["mean"], "o-", color=colour, ms=4, label=f"{label}: mean")
            ax.plot(x, g["median"], "_", color=colour, ms=10, mew=2)
        ax.plot([], [], "s", color="grey", alpha=0.35, ms=8, label="quartiles (bar), median (–)")
        ax.axhline(0, color="grey", lw=0.8)
        _common.log_ticks(ax, widths)
        ax.set_xlabel("pooled systems (pool width w)")
        ax.set_ylabel("bias of the unpooled run's\nmean RBP(p=0.8)@10 (estimate − true)")
        ax.set_title(f"Figure 1: bias of the unpooled run against pool width ({track})")
        _common.legend_outside(ax)
        _common.save_figure(fig, out, f"figure1{suffix}")
        # Table 1
        t1 = m[m["table"] == 1]
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharex=True)
        for est, g in t1.groupby("estimator", sort=False):
            colour, label = STYLE[("irrelevant", est)]
            g = g.sort_values("width")
            for ax, col in zip(axes, ("mae", "rmse"), strict=True):
                ax.plot(g["width"], g[col], "o-", color=colour, ms=4, label=label)
        for ax, col in zip(axes, ("MAE", "RMSE"), strict=True):
            _common.log_ticks(ax, widths)
            ax.set_xlabel("pooled systems (pool width w)")
            ax.set_ylabel(f"{col} of the mean RBP(p=0.8)@10")
            ax.set_ylim(bottom=0)
        fig.suptitle(f"Table 1: inference from systems, unjudged = irrelevant ({track})")
        fig.legend(
            *axes[0].get_legend_handles_labels(),
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=2,
        )
        fig.tight_layout()
        _common.save_figure(fig, out, f"table1{suffix}")
        # Tables 2 and 3
        for table, lists, title in (
            (2, "irrelevant", "unjudged = irrelevant"),
            (3, "condensed", "condensed lists"),
        ):
            t = m[m["table"] == table]
            fig, axes = plt.subplots(
                2, len(widths), figsize=(2.1 * len(widths) + 0.6, 4.4), sharex=True, sharey="row"
            )
            axes = np.asarray(axes).reshape(2, len(widths))  # one width: a column, not a row
            for j, w in enumerate(widths):
                for est, g in t[t["width"] == w].groupby("estimator", sort=False):
                    colour, label = STYLE[(lists, est)]
                    g = g.sort_values("common_topics")
                    for i, col in enumerate(("mae", "rmse")):
                        axes[i, j].plot(
                            g["common_topics"], g[col], "o-", color=colour, ms=3, label=label
                        )
                axes[0, j].set_title(f"w = {w}")
                axes[1, j].set_xlabel("common topics n")
                axes[1, j].set_xticks(sorted(t["common_topics"].unique()))
            axes[0, 0].set_ylabel("MAE")
            axes[1, 0].set_ylabel("RMSE")
            axes[0, 0].set_ylim(bottom=0)
            axes[1, 0].set_ylim(bottom=0)
            fig.suptitle(f"Table {table}: inference from common topics, {title} ({track})")
            fig.legend(
                *axes[0, 0].get_legend_handles_labels(),
                loc="upper center",
                bbox_to_anchor=(0.5, 0.0),
                ncol=3,
            )
            fig.tight_layout()
            _common.save_figure(fig, out, f"table{table}{suffix}")


def report(result: dict[str, pd.DataFrame]) -> str:
    """Readable terminal tables in the paper's layout, then the claims."""
    lines = []
    err = result["errors"]
    if "part" not in err.columns:
        err = err.assign(part="all")
    for track, m in err.groupby("track", sort=False):
        lines.append(f"\n=== Webber & Park 2009 on {track} ===")
        for note in result["notes"].loc[result["notes"]["track"] == track, "note"]:
            lines.append(f"note: {note}")
        bt = result["bias"]
        bt = bt[bt["track"] == track]
        lines.append("\nFigure 1: bias of r's mean RBP@10 (estimate − true) over the repeats")
        lines.append(bt.drop(columns="track").round(4).to_string(index=False))
        manual = m[m["part"] == "manual"]
        m = m[m["part"] == "all"]
        for g, title in (
            (m, "Table 1 (left): inference from systems (unjudged = irrelevant)"),
            (manual, "Table 1 (right): manual runs unpooled, automatic runs pooled"),
        ):
            if g.empty:
                lines.append(f"\n{title}: not run — {NO_MANUAL}")
                continue
            t1 = g[g["table"] == 1].pivot_table(
                index="width", columns="estimator", values=["mae", "rmse", "bias"]
            )
            lines.append(f"\n{title}")
            lines.append(t1.round(4).to_string())
        for table, g, title in (
            (2, m, "Table 2: inference from common topics (unjudged = irrelevant)"),
            (3, m, "Table 3: inference from common topics (condensed lists)"),
            (2, manual, "Table 4: manual runs, inference from common topics"),
        ):
            if g.empty:
                continue
            t = g[g["table"] == table].pivot_table(
                index=["width", "estimator"], columns="common_topics", values=["mae", "rmse"]
            )
            lines.append(f"\n{title}; columns = common topics")
            lines.append(t.round(4).to_string())
    lines.append(_common.claims.report(result["claims"]))
    return "\n".join(lines)
