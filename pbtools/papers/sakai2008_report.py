"""Sakai (2008): the figures and the terminal report of :mod:`pbtools.papers.sakai2008`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pbtools.papers import common as _common
from pbtools.papers.sakai2008_claims import LABELS

#: one colour per condition in every figure
COLOURS = {
    "full": "#444444",
    "leave-one-team-out": "#1b9e77",
    "take-one-team": "#d95f02",
    "take-three-teams": "#7570b3",
    "pd=50": "#66a61e",
    "pd=10": "#e6ab02",
    "pd=1": "#a6761d",
}


def _condition_name(kind: str, condition: str) -> str:
    if kind == "shallow":
        return condition
    return kind.replace("_", "-")


def figures(result: dict[str, pd.DataFrame], out: Path) -> None:
    """The figures ``change``, ``tau`` and ``power`` (PNG, PDF, SVG; Agg backend)."""
    plt = _common.pyplot()
    x = np.arange(len(LABELS))
    for track in result["scores"]["track"].unique():
        suffix = _common.plot_suffix(result["scores"], track)
        # Tables 3-4: score change of each team's own run
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        for i, (key, kind) in enumerate(
            (("leave-one-team-out", "leave_one_team_out"), ("take-one-team", "take_one_team"))
        ):
            ch = result[kind]
            ch = ch[(ch["track"] == track) & ch["valid"]]
            data = [ch.loc[ch["label"] == lab, "change_pct"].dropna().to_numpy() for lab in LABELS]
            bp = ax.boxplot(
                data,
                positions=x + (i - 0.5) * 0.38,
                widths=0.32,
                patch_artist=True,
                showfliers=True,
                flierprops={"marker": ".", "markersize": 3},
                medianprops={"color": "black"},
            )
            for box in bp["boxes"]:
                box.set_facecolor(COLOURS[key])
                box.set_alpha(0.8)
            ax.plot([], [], "s", color=COLOURS[key], label=key)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_yscale("symlog", linthresh=1)
        ticks = [-100, -10, -1, 0, 1, 10, 100]
        ax.set_yticks(ticks, [f"{t:+d}".replace("-", "−") if t else "0" for t in ticks])
        ax.yaxis.set_minor_locator(_common.matplotlib_null_locator())
        ax.set_xticks(x, LABELS)
        ax.set_xlabel("metric (AP' … bpref: condensed lists; AP … RBP: unjudged = non-relevant)")
        ax.set_ylabel("score change of the team's run (%)\n(symmetric log scale)")
        ax.set_title(f"Tables 3-4: score change when the team is left out / taken alone ({track})")
        _common.legend_outside(ax)
        _common.save_figure(fig, out, f"change{suffix}")

        summ = result["summary"][result["summary"]["track"] == track]
        summ = summ[summ["condition"] != "smallest-unique"]
        keys = [(k, c) for k, c in dict.fromkeys(zip(summ["kind"], summ["condition"], strict=True))]
        # Tables 5, 8: tau
        tau_keys = [(k, c) for k, c in keys if k != "full"]
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        _bars(ax, summ, tau_keys, "tau", x)
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("Kendall's τ-b with the ranking\nunder the full relevance data")
        ax.set_xlabel("metric")
        ax.set_xticks(x, LABELS)
        ax.set_title(f"Tables 5, 8: rank stability of the selected runs ({track})")
        _common.legend_outside(ax)
        _common.save_figure(fig, out, f"tau{suffix}")
        # Tables 6, 7, 9, 10: power, misses, false alarms
        fig, axes = plt.subplots(3, 1, figsize=(7.5, 7.6), sharex=True)
        _bars(axes[0], summ, keys, "share_significant", x, scale=100)
        axes[0].set_ylabel(f"discriminative power\n(% of pairs, α = {_alpha(result)})")
        axes[0].set_ylim(0, 100)
        _bars(axes[1], summ, tau_keys, "misses", x)
        axes[1].set_ylabel("misses (pairs;\nmean over teams/triples)")
        _bars(axes[2], summ, tau_keys, "false_alarms", x)
        axes[2].set_ylabel("false alarms (pairs;\nmean over teams/triples)")
        axes[2].set_xticks(x, LABELS)
        axes[2].set_xlabel("metric")
        axes[0].set_title(f"Tables 6, 7, 9, 10: discriminative power ({track})")
        _common.legend_outside(axes[0])
        _common.save_figure(fig, out, f"power{suffix}")


def _alpha(result) -> str:
    return f"{result['power']['alpha'].iloc[0]:g}"


def _bars(ax, summ, keys, what, x, scale=1.0) -> None:
    width = 0.84 / max(len(keys), 1)
    for i, (k, c) in enumerate(keys):
        g = summ[(summ["kind"] == k) & (summ["condition"] == c)]
        v = g.set_index("label")[what].reindex(list(LABELS)).to_numpy(dtype=float) * scale
        name = _condition_name(k, c)
        ax.bar(x - 0.42 + (i + 0.5) * width, v, width, color=COLOURS.get(name), label=name)


def _pivot(df: pd.DataFrame, index, value: str) -> pd.DataFrame:
    p = df.pivot_table(
        index=index, columns="label", values=value, aggfunc="first", sort=False, observed=True
    )
    return p.reindex(columns=[c for c in LABELS if c in p.columns])


def _change_table(ch: pd.DataFrame) -> str:
    """Tables 3/4 as in the paper: the change and "full → reduced" rank per team."""
    cell = ch.assign(
        cell=[
            f"{c:+.2f}% {a}{'→' if a == b else ('↑' if b < a else '↓')}{b}"
            for c, a, b in zip(ch["change_pct"], ch["rank_full"], ch["rank_reduced"], strict=True)
        ]
    )
    t = _pivot(cell, ["team", "name"], "cell")
    t.index = [
        f"{'†' if not v else ''}{tm[:28]} ({nm})"
        for (tm, nm), v in zip(
            t.index, ch.groupby(["team", "name"], sort=False)["valid"].first(), strict=True
        )
    ]
    return t.to_string()


def report(result: dict[str, pd.DataFrame]) -> str:
    """Tables 1-10 for the terminal, then the claims."""
    lines = []
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 20)
    for track in result["scores"]["track"].unique():
        lines.append(f"\n=== Sakai 2008 on {track} ===")
        c = result["collection"]
        c = c[c["track"] == track].iloc[0]
        lines.append("\nTable 1: the data")
        lines.append(
            f"  topics {c['topics']}, documents n.a. (not in the TREC layout), pool depth "
            f"{c['pool_depth']}\n  average N {c['N_mean']:.1f}, range N [{c['N_min']}, "
            f"{c['N_max']}]; average R {c['R_mean']:.1f}, range R [{c['R_min']}, {c['R_max']}]"
            f"\n  relevant documents per topic by label: {c['rel_levels']}\n  runs "
            f"{c['runs']} ({c['pooled_runs']} pooled), teams {c['teams']}"
        )
        sel = result["selected"]
        sel = sel[sel["track"] == track]
        lines.append(
            "\nTable 2: teams (pooled runs, |U_t| and |U_t^rel| per topic; the selected run; "
            "† no relevant document on some topic of D_t, * take-three-teams)"
        )
        t2 = sel.assign(
            team=[
                f"{t[:40]}{'†' if d else ''}{'*' if s else ''}"
                for t, d, s in zip(sel["team"], sel["dagger"], sel["star"], strict=True)
            ]
        )[["team", "n_runs", "unique_docs", "unique_rel", "name"]]
        lines.append(t2.round(2).to_string(index=False))
        for kind, title in (
            ("leave_one_team_out", "Table 3: leave-one-team-out (J − U_t)"),
            ("take_one_team", "Table 4: take-one-team (D_t)"),
        ):
            ch = result[kind]
            ch = ch[ch["track"] == track]
            lines.append(f"\n{title}: score change and rank change of each team's run")
            lines.append(_change_table(ch))
        s = result["summary"]
        s = s[s["track"] == track].assign(row=lambda d: d["kind"] + " " + d["condition"])
        lines.append("\nTables 5, 8: Kendall's tau vs the full relevance data")
        lines.append(_pivot(s[s["kind"] != "full"], "row", "tau").round(3).to_string())
        lines.append(
            "\nTables 6, 7, 9, 10: discriminative power over "
            f"{int(result['power']['n_topics'].max())} topics"
        )
        lines.append(_pivot(s, "row", "share_significant").round(3).to_string())
        lines.append("\nestimated difference required (full relevance data)")
        lines.append(
            _pivot(s[s["kind"] == "full"], "row", "required_difference").round(3).to_string()
        )
        lines.append("\nmisses (mean over conditions)")
        lines.append(_pivot(s[s["kind"] != "full"], "row", "misses").round(2).to_string())
        lines.append("\nfalse alarms (mean over conditions)")
        lines.append(_pivot(s[s["kind"] != "full"], "row", "false_alarms").round(2).to_string())
    lines.append(_common.claims.report(result["claims"]))
    return "\n".join(lines)
