"""Sakai (2008): the experiment's conditions and one grid task that scores them.

The conditions of :mod:`pbtools.papers.sakai2008` (full J; leave-one-team-out J − U_t;
take-one-team and take-three-teams D_t; shallow pools), the relevance data of each
(:func:`reduced_qrels`), the selected run of each team (:func:`select_runs`), |U_t| per team
(:func:`unique_per_team`) and the grid task that scores the selected runs and tests every pair
under a chunk of conditions (:func:`evaluate_conditions`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools import measures, pooling, stats
from pbtools.frames import judge


def reduced_qrels(
    kind: str,
    conditions: list[tuple[str, tuple]],
    qrels: pd.DataFrame,
    runs: pd.DataFrame,
    orgs: pd.DataFrame,
    pooled: list[str],
    depth: int,
) -> pd.DataFrame:
    """Relevance data of every condition of one kind, stacked with a ``condition`` column.

    ``conditions``: ``[(condition name, teams or (depth,))]``. full → J; leave_one_team_out →
    J − U_t (pooling.leave_one_out by org); take_one_team / take_three_teams → J ∩ ∪_{t∈T} D_t
    (pooling.take_teams); shallow → J ∩ pool(pooled runs, pd) (pooling.shallow).
    """
    names = [c for c, _ in conditions]
    if kind == "full":
        out = qrels.assign(condition=names[0])
    elif kind == "leave_one_team_out":
        red = pooling.leave_one_out(
            runs,
            qrels,
            depth,
            leave_out="org",
            orgs=orgs,
            units=[u[0] for _, u in conditions],
            pooled=pooled,
        )
        out = red.rename(columns={"left_out": "condition"})
    elif kind in ("take_one_team", "take_three_teams"):
        combos = [sorted(teams) for _, teams in conditions]
        red = pooling.take_teams(runs, qrels, depth, orgs=orgs, combos=combos, pooled=pooled)
        label = {pooling.SEP.join(c): name for c, (name, _) in zip(combos, conditions, strict=True)}
        out = red.rename(columns={"kept": "condition"})
        out["condition"] = out["condition"].astype("str").map(label)
    elif kind == "shallow":
        ds = [d for _, (d,) in conditions]
        red = pooling.shallow(runs, qrels, ds, pooled=pooled)
        label = {d: name for d, (name, _) in zip(ds, conditions, strict=True)}
        out = red.assign(condition=red["depth"].map(label)).drop(columns="depth")
    else:
        raise ValueError(f"unknown kind {kind!r}")
    out = out.reset_index(drop=True)
    out["condition"] = out["condition"].astype("str")
    return out[["qid", "docno", "label", "condition"]]


def evaluate_conditions(
    kind: str,
    conditions: list[tuple[str, tuple]],
    *,
    runs,
    pool_runs,
    qrels,
    orgs,
    pooled,
    depth,
    selected,
    topics,
    metric_names,
    B,
    alpha,
    boot_seed,
) -> dict:
    """One grid task: score the selected runs under each condition and test every run pair.

    ``runs``: the selected runs; ``pool_runs``: the top ``depth`` of the pooled runs (all the
    reductions need).

    ``topics``: the topics every score and test is taken over; a topic a run did not answer, or
    that a condition's relevance data lack, scores 0 (trec_eval ``-c``). Returns ``per_topic``
    (``kind``, ``condition``, ``name``, ``qid``, ``measure``, ``value``), ``pairs``
    (``kind``, ``condition``, ``measure``, ``name_a``, ``name_b``, ``diff``, ``significant``,
    ``required_diff``) and ``validity`` (``kind``, ``condition``, ``topics_without_rel``).
    """
    red = reduced_qrels(kind, conditions, qrels, pool_runs, orgs, pooled, depth)
    pt = measures.evaluate(
        runs, red, metric_names, keys=["condition"], per_topic=True, topics="all"
    )
    pt = pt[["condition", "name", "qid", "measure", "value"]].astype(
        {"condition": "str", "name": "str", "qid": "str", "measure": "str"}
    )
    # complete (condition, measure, run, topic) grid over ``topics``: absent cells score 0
    full_index = pd.MultiIndex.from_product(
        [[c for c, _ in conditions], list(metric_names), list(selected), list(topics)],
        names=["condition", "measure", "name", "qid"],
    )
    pt = (
        pt.set_index(["condition", "measure", "name", "qid"])["value"]
        .reindex(full_index, fill_value=0.0)
        .reset_index()
    )
    # Sakai's † rule: a condition without a relevant document on some topic
    rel = red[(red["label"] > 0) & red["qid"].astype("str").isin(topics)]
    n_rel_q = rel.groupby("condition", observed=True)["qid"].nunique()
    validity = pd.DataFrame({"kind": kind, "condition": [c for c, _ in conditions]})
    validity["topics_without_rel"] = [
        len(topics) - int(n_rel_q.get(c, 0)) for c in validity["condition"]
    ]
    pairs = []
    for (cond, meas), g in pt.groupby(["condition", "measure"], sort=False):
        dp = stats.discriminative_power(g, B=B, alpha=alpha, seed=boot_seed)
        pairs.append(
            dp[["name_a", "name_b", "diff", "significant", "required_diff"]].assign(
                condition=cond, measure=meas
            )
        )
    pairs = pd.concat(pairs, ignore_index=True).assign(kind=kind)
    return {"per_topic": pt.assign(kind=kind), "pairs": pairs, "validity": validity}


def select_runs(pooled: list[str], orgs: pd.DataFrame, seed: int) -> pd.DataFrame:
    """One pooled run per team, drawn with ``numpy.random.default_rng(seed)`` (Sakai §4).

    Returns ``team``, ``name``, ``n_runs`` (the team's pooled runs), sorted by team.
    """
    team = pooling.unit_map(pooled, "org", orgs)
    df = pd.DataFrame({"name": team.index.astype(str), "team": team.to_numpy(dtype=str)})
    df = df.sort_values(["team", "name"]).reset_index(drop=True)
    rng = np.random.default_rng(seed)
    rows = []
    for t, g in df.groupby("team", sort=True):  # one draw per team (a few dozen)
        rows.append(
            {"team": t, "name": g["name"].iloc[int(rng.integers(len(g)))], "n_runs": len(g)}
        )
    return pd.DataFrame(rows)


def unique_per_team(runs, qrels, orgs, pooled, depth) -> pd.DataFrame:
    """|U_t| and |U_t^rel| per topic for every team (Sakai Table 2; pooling.contributions)."""
    pr = runs[runs["name"].astype("str").isin(pooled)]
    c = pooling.contributions(pr, depth, unit="org", orgs=orgs)
    c = c[c["n_units"] == 1]
    j = judge(c, qrels[["qid", "docno", "label"]], keys=[])
    n_topics = qrels["qid"].nunique()
    out = pd.DataFrame({"team": j["unit"].astype("str"), "rel": j["label"].fillna(0) > 0})
    agg = out.groupby("team").agg(unique_docs=("rel", "size"), unique_rel=("rel", "sum"))
    return (agg / n_topics).reset_index()


def experiment_conditions(
    teams: list[str], uniq: pd.DataFrame, combos: int, depths, depth: int, seed: int
):
    """Every condition of the experiment, per kind: ``{kind: [(name, teams or (pd,))]}``.

    take-three-teams: Sakai's three teams with the fewest unique contributions
    (``smallest-unique``) and ``combos`` random other triples (seeded)."""
    conds: dict[str, list[tuple[str, tuple]]] = {
        "full": [("full", ())],
        "leave_one_team_out": [(t, (t,)) for t in teams],
        "take_one_team": [(t, (t,)) for t in teams],
        "shallow": [(f"pd={d}", (int(d),)) for d in depths if int(d) < depth],
    }
    three = []
    if len(teams) >= 3:
        u = uniq.set_index("team").reindex(teams)["unique_docs"].fillna(0)
        smallest = tuple(sorted(u.sort_values(kind="stable").index[:3]))
        three.append(("smallest-unique", smallest))
        rng = np.random.default_rng(seed + 3)
        seen = {smallest}
        n_possible = len(teams) * (len(teams) - 1) * (len(teams) - 2) // 6
        while len(seen) < min(combos + 1, n_possible):  # a handful of seeded draws
            c = tuple(sorted(rng.choice(teams, size=3, replace=False).tolist()))
            if c not in seen:
                seen.add(c)
                three.append((f"sample-{len(three):02d}", c))
    conds["take_three_teams"] = three
    return conds
