"""Lipani, Lupu & Hanbury (2015): the figures, the terminal report and Table 2's documents of
:mod:`pbtools.papers.lipani2015`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pbtools import stats
from pbtools.papers import common as _common
from pbtools.papers.lipani2015_claims import ESTIMATORS

#: one colour per estimator (and Lipani variant) in every figure
COLOURS = {
    "lipani": "#1f77b4",
    "webber": "#ff7f0e",
    "reduced": "#2ca02c",
    "lambda": "#1f77b4",
    "dP": "#9467bd",
    "dAntiP": "#8c564b",
    "always": "#7f7f7f",
}


LABELS = {"lipani": "Lipani et al.", "webber": "Webber & Park", "reduced": "reduced pool"}


def documents(res: dict) -> dict[str, str]:
    """``table2.md`` and ``table2.tex``: Table 2 (top 75 %) laid out as in the paper."""
    top = res["table2"][(res["table2"]["runs"] == "top75") & (res["table2"]["by"] == "org")]
    layout = stats.table2(top.drop(columns=["by", "measure"]), estimators=list(ESTIMATORS))
    return {
        "table2.md": stats.to_markdown(layout) + "\n",
        "table2.tex": stats.to_latex(layout) + "\n",
    }


def figures(res: dict, out: Path) -> None:
    """Figures 1-4 and the sweep plot (PNG, PDF, SVG; Agg backend) in the directory ``out``."""
    plt = _common.pyplot()
    from matplotlib.ticker import MaxNLocator

    table, tracks = res["table2"], list(pd.unique(res["table2"]["track"]))
    table = table[table["by"] == "org"]
    ns = sorted(table["n"].unique())
    for fig_no, col, label in ((3, "mae", "MAE of P@n"), (4, "sre", "SRE (rank positions)")):
        fig, axes = plt.subplots(1, len(tracks), figsize=(4.4 * len(tracks), 3.3), squeeze=False)
        for ax, tr in zip(axes[0], tracks, strict=True):
            for est in ESTIMATORS:
                for runs, ls in (("all", "-"), ("top75", "--")):
                    g = table[
                        (table["track"] == tr)
                        & (table["estimator"] == est)
                        & (table["runs"] == runs)
                    ].sort_values("n")
                    ax.plot(
                        g["n"],
                        g[col],
                        ls=ls,
                        marker="o",
                        ms=3,
                        color=COLOURS[est],
                        label=f"{LABELS[est]} ({'all runs' if runs == 'all' else 'top 75 %'})",
                    )
            _common.log_ticks(ax, ns)
            ax.set_title(tr)
            ax.set_xlabel("cut-off n of P@n (documents)")
            ax.set_ylabel(label)
            ax.set_ylim(bottom=0)
        _common.legend_outside(axes[0][-1])
        fig.suptitle(f"Figure {fig_no}: {label.split(' (')[0]} against n, leave-one-org-out")
        fig.tight_layout()
        _common.save_figure(fig, out, f"figure{fig_no}")

    s = res["scores"]
    s = s[(s["estimator"] == "lipani") & (s["runs"] == "all") & (s["n"] == 10)]
    if "by" in s.columns:
        s = s[s["by"] == "org"]
    fig, axes = plt.subplots(1, len(tracks), figsize=(4.4 * len(tracks), 3.3), squeeze=False)
    for ax, tr in zip(axes[0], tracks, strict=True):
        g = s[s["track"] == tr]
        resid = g["true"] - g["P"]
        ax.scatter(resid, g["dP"], s=14, color="#1f77b4", label="ΔP@10")
        ax.scatter(resid, g["dAntiP"], s=14, marker="x", color="#d62728", label="ΔP̄@10")
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_xlabel("residual ε̂: true − reduced-pool P@10")
        ax.set_ylabel("ΔP@10, ΔP̄@10")
        ax.set_title(tr)
        # λ is two orders of magnitude smaller than ΔP, ΔP̄: its own axis, with its own zero
        # (the correction's trigger, λ > 0) drawn dashed
        lam_ax = ax.twinx()
        lam_ax.spines["right"].set_visible(True)
        lam_ax.grid(False)
        lam_ax.scatter(resid, g["lam"], s=14, marker="^", color="#2ca02c", label="λ@10")
        lam_ax.axhline(0, color="#2ca02c", lw=0.6, ls="--")
        lam_ax.set_ylabel("λ@10 (own scale; dashed: λ = 0)", color="#2ca02c")
        lam_ax.tick_params(axis="y", colors="#2ca02c")
    handles = [h for a in (ax, lam_ax) for h in a.get_legend_handles_labels()[0]]
    labels = [lab for a in (ax, lam_ax) for lab in a.get_legend_handles_labels()[1]]
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3)
    fig.suptitle("Figure 1: indicators against the residual, leave-one-organization-out")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    _common.save_figure(fig, out, "figure1")

    gt = res["gtheory"]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.3), sharey=True)
    cmap = plt.get_cmap("viridis")
    for ax, col, name in (
        (axes[0], "e_rho2", "generalizability coefficient Eρ²"),
        (axes[1], "phi", "dependability Φ"),
    ):
        for i, n in enumerate(ns):
            g = gt[gt["n"] == n]
            ax.scatter(
                g[col],
                g["mae_change_pct"],
                s=22,
                color=cmap(i / max(len(ns) - 1, 1)),
                label=f"P@{n}",
            )
            for _, row in g.iterrows():
                if gt["track"].nunique() > 1:
                    ax.annotate(
                        row["track"].split("/")[0], (row[col], row["mae_change_pct"]), fontsize=6
                    )
        ax.axhline(0, color="grey", lw=0.6)
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.set_xlabel(name)
    axes[0].set_ylabel("MAE change, Lipani vs reduced pool (%)")
    _common.legend_outside(axes[1])
    fig.suptitle("Figure 2: MAE change against the stability of the collection (top 75 %)")
    fig.tight_layout()
    _common.save_figure(fig, out, "figure2")

    sw = res["sweep"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.3))
    alpha_rows = sw[sw["estimator"].str.startswith("lipani(alpha=")].copy()
    alpha_rows["alpha"] = alpha_rows["estimator"].str.extract(r"alpha=([0-9.]+)")[0].astype(float)
    for (tr, n), g in alpha_rows[alpha_rows["runs"] == "top75"].groupby(["track", "n"]):
        g = g.sort_values("alpha")
        axes[0].plot(
            g["alpha"],
            g["mae"],
            marker="o",
            ms=3,
            color=cmap(ns.index(n) / max(len(ns) - 1, 1)),
            label=f"P@{n}" + (f" {tr}" if len(tracks) > 1 else ""),
        )
    axes[0].set_xlabel("merge weight α")
    axes[0].set_ylabel("MAE (top 75 %)")
    _common.legend_outside(axes[0])
    ind = sw[sw["estimator"].str.startswith("lipani(indicator=")]
    ind = pd.concat(
        [ind, sw[sw["estimator"] == "lipani(alpha=1)"].assign(estimator="lipani(indicator=lambda)")]
    )
    piv = ind[ind["runs"] == "top75"].pivot_table(
        index="n", columns="estimator", values="mae", aggfunc="mean"
    )
    width = 0.8 / max(len(piv.columns), 1)
    x = np.arange(len(piv.index))
    for j, est in enumerate(piv.columns):
        key = est.split("=")[1].rstrip(")")
        axes[1].bar(
            x - 0.4 + (j + 0.5) * width,
            piv[est],
            width,
            color=COLOURS.get(key),
            label={"lambda": "λ > 0", "dP": "ΔP > 0", "dAntiP": "ΔP̄ < 0", "always": "always"}.get(
                key, key
            ),
        )
    axes[1].set_xticks(x, [f"P@{n}" for n in piv.index])
    axes[1].set_xlabel("cut-off")
    axes[1].set_ylabel("MAE (top 75 %, mean over tracks)")
    _common.legend_outside(axes[1], title="correct when")
    fig.suptitle("§5.1: the α sweep and the bias indicators of Lipani's correction")
    fig.tight_layout()
    _common.save_figure(fig, out, "sweep")


def report(res: dict) -> str:
    """Table 2 (top 75 %) as Markdown, the top/worst counts, the sweeps, Figure 2 and the
    claims, for the terminal."""
    t2 = res["table2"]
    top = t2[(t2["runs"] == "top75") & (t2["by"] == "org")]
    lines = [
        "Table 2 (leave-one-organization-out, top 75% of the pooled runs)",
        "",
        stats.to_markdown(
            stats.table2(top.drop(columns=["by", "measure"]), estimators=list(ESTIMATORS))
        ),
        "",
    ]
    st = res["sre_tests"]
    st = st[(st["runs"] == "top75") & (st["by"] == "org")]
    lines += [
        "SRE* by test (top 75%, leave-one-organization-out): ranked = on the topics of each "
        "run's average (analyze), filled = unanswered topics scored 0",
        st.pivot_table(
            index=["track", "test", "topics", "estimator"], columns="n", values="sre_star"
        ).to_string(),
        "",
    ]
    sw = res["sweep"][res["sweep"]["runs"] == "top75"]
    piv = sw.pivot_table(index=["track", "n"], columns="estimator", values="mae")
    lines += ["Lipani variants, MAE (top 75%)", piv.round(4).to_string(), ""]
    lines += [
        "Figure 2: generalizability of the true P@n (all pooled runs) and the MAE change",
        res["gtheory"][["track", "n", "e_rho2", "phi", "mae_change_pct"]]
        .round(3)
        .to_string(index=False),
        "",
        "Table 1 / Figure 1's sab05ror1 (Robust 2005) is not in the data: not reproduced.",
    ]
    lines.append(_common.claims.report(res["claims"]))
    return "\n".join(lines)
