"""Sakai (2008): the tables of :mod:`pbtools.papers.sakai2008` built from its scores.

Table 1 (:func:`collection_table`), Tables 3/4 (:func:`change_table`), Tables 6, 7, 9, 10
(:func:`power_table`) and the summary in the paper's layout (:func:`summary_table`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools import pooling, stats


def collection_table(track: str, runs, qrels, orgs, pooled, depth) -> pd.DataFrame:
    """Sakai's Table 1 for one collection (per-topic N and R; relevance levels by label)."""
    q = qrels.astype({"qid": "str"})
    lab = q["label"].to_numpy()
    per = q.assign(R=lab > 0, N=lab == 0).groupby("qid")[["R", "N"]].sum()
    levels = q[q["label"] > 0].groupby("label").size() / len(per)
    team = pooling.unit_map(runs["name"].astype("str").unique(), "org", orgs)
    return pd.DataFrame(
        [
            {
                "track": track,
                "topics": len(per),
                "pool_depth": int(depth),
                "N_mean": per["N"].mean(),
                "N_min": int(per["N"].min()),
                "N_max": int(per["N"].max()),
                "R_mean": per["R"].mean(),
                "R_min": int(per["R"].min()),
                "R_max": int(per["R"].max()),
                "rel_levels": ", ".join(f"{int(k)}: {v:.1f}" for k, v in levels.items()),
                "runs": int(runs["name"].nunique()),
                "pooled_runs": len(pooled),
                "teams": int(team.nunique()),
            }
        ]
    )


def change_table(scores: pd.DataFrame, kind: str, sel: pd.DataFrame, labels, valid) -> pd.DataFrame:
    """Tables 3/4: the team's own run, full vs reduced score and rank among selected runs."""
    full = scores[scores["kind"] == "full"]
    red = scores[scores["kind"] == kind]
    rank_f = full.assign(rank=full.groupby("measure")["value"].rank(ascending=False, method="min"))
    rank_r = red.assign(
        rank=red.groupby(["condition", "measure"])["value"].rank(ascending=False, method="min")
    )
    own = sel.rename(columns={"team": "condition"})[["condition", "name"]]
    r = rank_r.merge(own, on=["condition", "name"])
    r = r.merge(
        rank_f[["name", "measure", "value", "rank"]], on=["name", "measure"], suffixes=("", "_full")
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = 100.0 * (r["value"] - r["value_full"]) / r["value_full"]
    out = pd.DataFrame(
        {
            "track": r["track"],
            "team": r["condition"],
            "name": r["name"],
            "measure": r["measure"],
            "label": r["measure"].map(labels),
            "full": r["value_full"],
            "reduced": r["value"],
            "change_pct": pct,
            "rank_full": r["rank_full"].astype(int),
            "rank_reduced": r["rank"].astype(int),
        }
    )
    out["valid"] = out["team"].map(valid).fillna(True).astype(bool)
    return out.reset_index(drop=True)


def power_table(track, pairs, labels, valid_map, norel_map, n_topics, alpha) -> pd.DataFrame:
    """Tables 6, 7, 9, 10: per (kind, condition, measure) power, misses and false alarms."""
    rows = []
    full_pairs = {m: g for m, g in pairs[pairs["kind"] == "full"].groupby("measure", sort=False)}
    for (kind, cond, meas), g in pairs.groupby(["kind", "condition", "measure"], sort=False):
        mf = stats.misses_false_alarms(full_pairs[meas], g).iloc[0]
        rows.append(
            {
                "track": track,
                "kind": kind,
                "condition": cond,
                "measure": meas,
                "label": labels[meas],
                "n_pairs": int(mf["n_pairs"]),
                "n_significant": int(mf["sig_reduced"]),
                "share_significant": float(mf["share_reduced"]),
                "required_difference": float(g["required_diff"].max()),
                "misses": int(mf["misses"]),
                "false_alarms": int(mf["false_alarms"]),
                "topics_without_rel": int(norel_map.get((kind, cond), 0)),
                "n_topics": n_topics,
                "alpha": alpha,
                "valid": bool(valid_map.get((kind, cond), True)),
            }
        )
    return pd.DataFrame(rows)


def summary_table(track: str, tau: pd.DataFrame, power: pd.DataFrame, labels) -> pd.DataFrame:
    """Sakai's table layout: per kind (averaged over its valid conditions) and measure."""
    m = power.merge(
        tau[["kind", "condition", "measure", "tau"]],
        on=["kind", "condition", "measure"],
        how="left",
    )
    m = m[m["valid"]]
    m["group"] = np.where(m["kind"] == "shallow", m["condition"], "mean")
    extra = m[m["condition"] == "smallest-unique"].assign(group="smallest-unique")
    m = pd.concat([m, extra], ignore_index=True)
    out = (
        m.groupby(["kind", "group", "measure"], sort=False)
        .agg(
            tau=("tau", "mean"),
            share_significant=("share_significant", "mean"),
            required_difference=("required_difference", "mean"),
            misses=("misses", "mean"),
            false_alarms=("false_alarms", "mean"),
            n_conditions=("condition", "size"),
        )
        .reset_index()
        .rename(columns={"group": "condition"})
    )
    out.loc[out["kind"] == "full", "condition"] = "full"
    out.insert(0, "track", track)
    out.insert(4, "label", out["measure"].map(labels))
    return out
