"""Sakai (2008), "On the robustness of information retrieval metrics to biased assessments".

Reproduces Sakai's §4-§7 on any collection in the TREC layout, for the nine metrics AP', Q',
nDCG', RBP', bpref (condensed lists) and AP, Q, nDCG, RBP, and checks the paper's claims
(``claims.parquet`` / ``claims.md``):

* **Table 1** (the data): topics, pool depth, judged non-relevant N and relevant R per topic,
  relevance levels, runs and teams.
* **Table 2** (the teams): pooled runs, |U_t| and |U_t^rel| per topic; "†" marks the teams
  without a relevant document on some topic of D_t (left out of take-one-team), "*" the three
  teams with the fewest unique contributions (take-three-teams).
* **Table 3** (leave-one-team-out, system bias): one randomly selected (seeded) pooled run per
  team is evaluated with J − U_t; score change (%) and rank change among the selected runs.
* **Table 4** (take-one-team): the same with J replaced by D_t.
* **Table 5** (rank stability): Kendall's τ-b between the ranking of the selected runs under J
  and under take-one-team (averaged over the teams without "†") and take-three-teams data.
* **Tables 6-7** (discriminative power): share of run pairs significant at ``--alpha`` by
  Sakai's two-sided paired bootstrap test (``--B`` resamples, one seeded resample matrix shared
  by all conditions), misses and false alarms against J, the difference required (full J).
* **Tables 8-10** (pool-depth bias): τ, discriminative power, misses and false alarms for
  shallow pools of depth ``--depths`` (50, 10, 1) formed from every pooled run.

The paper's procedure is the default. Departures are options: ``--answered-topics`` restricts
every score and test to the topics all selected runs answered (default, as the paper's data
have it: every topic, a topic a run did not answer scoring 0, trec_eval ``-c``); ``--combos N``
adds N random take-three-teams combinations to Sakai's choice (the three teams with the fewest
unique contributions). What the data force: TREC collections other than TREC 2003/2004 robust
may be binary (TREC-2 is: Q and nDCG then use gain 1 and equal their binary forms' ranking);
``nDCG`` is trec_eval's (log2(r + 1) discount over the whole ranking), not Sakai's nDCG@1000
with log base 2 and no discount for ranks ≤ 2, which pbtools does not implement. RBP uses
p = 0.95 as in the paper (``--rbp-p``).

The claims are declared in :mod:`pbtools.papers.sakai2008_claims` (:data:`CLAIMS`), with the
reading of the paper's wording each criterion makes ("generally" = ≥ 2/3 of the comparisons).

Usage::

    python -m pbtools.papers.sakai2008 ../shared/data/trec/TREC-2/Adhoc
    python -m pbtools.papers.sakai2008 ../shared/data/trec      # every track under ROOT
    python -m pbtools.papers.sakai2008 --synthetic -o out/sakai_synth
    python -m pbtools.papers.sakai2008 ROOT --jobs 4 --dask tcp://scheduler:8786

Outputs in ``-o DIR`` (default ``out/sakai2008/``), Parquet with the parameters as metadata:

``collection.parquet`` (Table 1)
    ``track``, ``topics``, ``pool_depth``, ``N_mean``, ``N_min``, ``N_max``, ``R_mean``,
    ``R_min``, ``R_max``, ``rel_levels`` (per-topic mean count by label, e.g. ``1: 46.6``),
    ``runs``, ``pooled_runs``, ``teams``.
``selected.parquet`` (Table 2)
    ``track``, ``team``, ``name``, ``n_runs``, ``unique_docs``, ``unique_rel`` (per topic),
    ``dagger`` (no relevant document on some topic of D_t), ``star`` (take-three-teams team).
``scores.parquet``
    ``track``, ``kind``, ``condition``, ``name``, ``measure``, ``value``: mean scores of the
    selected runs under every condition (kind ∈ full, leave_one_team_out, take_one_team,
    take_three_teams, shallow).
``leave_one_team_out.parquet`` / ``take_one_team.parquet`` (Tables 3 / 4)
    ``track``, ``team``, ``name``, ``measure``, ``label``, ``full``, ``reduced``,
    ``change_pct``, ``rank_full``, ``rank_reduced``, ``valid``.
``tau.parquet`` (Tables 5, 8)
    ``track``, ``kind``, ``condition``, ``measure``, ``label``, ``tau``, ``valid``.
``power.parquet`` (Tables 6, 7, 9, 10)
    ``track``, ``kind``, ``condition``, ``measure``, ``label``, ``n_pairs``, ``n_significant``,
    ``share_significant``, ``required_difference``, ``misses``, ``false_alarms``,
    ``topics_without_rel``, ``n_topics``, ``alpha``, ``valid`` (False: a take-one-team
    condition without a relevant document on some topic, Sakai's "†", excluded from the
    averages).
``summary.parquet``
    ``track``, ``kind``, ``condition`` (``mean`` for averaged kinds, ``pd=…`` for shallow
    pools, ``smallest-unique`` for Sakai's take-three-teams choice), ``measure``, ``label``,
    ``tau``, ``share_significant``, ``required_difference``, ``misses``, ``false_alarms``,
    ``n_conditions`` (valid conditions averaged).
``claims.parquet``, ``claims.md``
    the paper's claims checked on each track (:mod:`claims`).

Figures (PNG, PDF, SVG; one colour per condition in all of them): ``change`` (Tables 3-4: score
change of each team's run), ``tau`` (Tables 5, 8), ``power`` (Tables 6, 7, 9, 10: power,
misses and false alarms).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pbtools import grid, measures, pooling, stats
from pbtools.frames import judge
from pbtools.papers import common as _common
from pbtools.papers.sakai2008_claims import (  # noqa: F401  (CLAIMS: the declared catalogue)
    CLAIMS,
    LABELS,
    claims_table,
)
from pbtools.pooling import inference
from pbtools.pooling.who_pooled import top_rows

TITLE = 'Sakai (2008), "On the robustness of information retrieval metrics to biased assessments"'
#: Sakai's nine metrics in the paper's column order: (label, pbtools measure name)
METRICS = (
    ("AP'", "AP(judged_only=True)"),
    ("Q'", "Q(beta=1,judged_only=True)"),
    ("nDCG'", "nDCG(judged_only=True)"),
    ("RBP'", "RBP(p={p},judged_only=True)"),
    ("bpref", "Bpref"),
    ("AP", "AP"),
    ("Q", "Q(beta=1)"),
    ("nDCG", "nDCG"),
    ("RBP", "RBP(p={p})"),
)
assert LABELS == tuple(lab for lab, _ in METRICS)
KINDS = ("full", "leave_one_team_out", "take_one_team", "take_three_teams", "shallow")
#: what each parameter of :data:`DEFAULTS` means (``pbtools reproduce sakai2008 --help``)
OPTIONS = {
    "seed": "seed of the random choices (selected runs, bootstrap samples)",
    "B": "bootstrap samples of the discriminative-power test (paper: 1000)",
    "alpha": "significance level of the discriminative-power test",
    "combos": "take-k-teams combinations per k (0: every leave-one-team-out only)",
    "depths": "shallow pool depths, from the original pool depth down",
    "rbp_p": "persistence of RBP among the nine metrics",
    "depth": "pool depth override (default: inferred from the qrels)",
    "topics": "topics a run is averaged over: all (qrels) or answered",
    "synthetic": "run on a pbtools.synth collection with complete judgments",
}
DEFAULTS = dict(
    seed=2008,
    B=1000,
    alpha=0.05,
    combos=0,
    depths=(50, 10, 1),
    rbp_p=0.95,
    depth=None,
    topics="all",
    lenient=True,
    synthetic=False,
)
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


# --------------------------------------------------------------------------------------------
# conditions: reduced relevance data keyed by ``condition``
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# the experiment
# --------------------------------------------------------------------------------------------


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


def _conditions(teams: list[str], uniq: pd.DataFrame, combos: int, depths, depth: int, seed: int):
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


def _changes(scores: pd.DataFrame, kind: str, sel: pd.DataFrame, labels, valid) -> pd.DataFrame:
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


def _power(track, pairs, labels, valid_map, norel_map, n_topics, alpha) -> pd.DataFrame:
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


def run_track(
    track: str,
    runs,
    qrels,
    orgs,
    *,
    jobs: int = 1,
    dask=None,
    seed: int = 2008,
    B: int = 1000,
    alpha: float = 0.05,
    combos: int = 0,
    depths=(50, 10, 1),
    rbp_p: float = 0.95,
    depth: int | None = None,
    topics: str = "all",
    pooled: list[str] | None = None,
    progress=None,
) -> dict:
    """The whole experiment on one collection; returns the frames of :func:`run` (one track).

    ``pooled``/``depth``: the pooled runs and pool depth (default: inferred from the qrels).
    ``topics``: ``"all"`` (every qrels topic; unanswered ones score 0) or ``"answered"`` (the
    topics every selected run answered).
    """
    if topics not in ("all", "answered"):
        raise ValueError(f"topics must be 'all' or 'answered', got {topics!r}")
    if pooled is None:
        info = inference.infer_pool(runs, qrels, depth=depth)
        pooled, depth = sorted(map(str, info.pooled_runs)), int(info.depth)
    metric_names = [measures.measure_names([m.format(p=rbp_p)])[0] for _, m in METRICS]
    labels = {m: lab for lab, m in zip(LABELS, metric_names, strict=True)}
    sel = select_runs(pooled, orgs, seed)
    teams = sel["team"].tolist()
    uniq = unique_per_team(runs, qrels, orgs, pooled, depth)
    sel = sel.merge(uniq, on="team", how="left").fillna({"unique_docs": 0.0, "unique_rel": 0.0})
    topic_list = sorted(qrels["qid"].astype("str").unique())
    if topics == "answered":
        answered = runs[runs["name"].astype("str").isin(sel["name"])]
        per_q = answered.groupby(answered["qid"].astype("str"))["name"].nunique()
        topic_list = [q for q in topic_list if per_q.get(q, 0) == len(sel)]
    conds = _conditions(teams, uniq, combos, depths, depth, seed)
    chunk = max(1, -(-len(teams) // max(2 * (jobs or grid.default_jobs()), 1)))
    params = []
    for kind in KINDS:
        cs = conds[kind]
        for k in range(0, len(cs), chunk):  # a few chunks per kind, one grid task each
            params.append({"kind": kind, "conditions": cs[k : k + chunk]})
    names = runs["name"]
    shared = dict(
        runs=runs[names.isin(sel["name"])].reset_index(drop=True),
        pool_runs=top_rows(runs, depth, pooled).reset_index(drop=True),
        qrels=qrels,
        orgs=orgs,
        pooled=pooled,
        depth=depth,
        selected=sel["name"].tolist(),
        topics=topic_list,
        metric_names=metric_names,
        B=B,
        alpha=alpha,
        boot_seed=seed,
    )
    res = grid.run_grid(
        evaluate_conditions,
        params,
        jobs=jobs,
        dask=dask,
        shared=shared,
        progress=progress,
        desc=f"sakai2008 {track}",
    )
    pt = pd.concat([r["per_topic"] for r in res], ignore_index=True)
    pairs = pd.concat([r["pairs"] for r in res], ignore_index=True)
    validity = pd.concat([r["validity"] for r in res], ignore_index=True)
    # Sakai's † rule applies to take-one-team only (his take-three teams include a † team)
    validity["valid"] = (validity["topics_without_rel"] == 0) | (
        validity["kind"] != "take_one_team"
    )
    valid_map = validity.set_index(["kind", "condition"])["valid"]
    norel_map = validity.set_index(["kind", "condition"])["topics_without_rel"]

    scores = (
        pt.groupby(["kind", "condition", "name", "measure"], sort=False, observed=True)["value"]
        .mean()
        .reset_index()
    )
    scores.insert(0, "track", track)
    # Kendall tau (Tables 5, 8)
    full = scores[scores["kind"] == "full"][["name", "measure", "value"]]
    other = scores[scores["kind"] != "full"]
    tau_in = other.merge(full, on=["name", "measure"], suffixes=("", "_full"))
    tau_in = tau_in.rename(columns={"value_full": "true", "value": "estimate"})
    tau = stats.kendall_tau(
        tau_in[["kind", "condition", "measure", "name", "true", "estimate"]],
        by=["kind", "condition", "measure"],
    )
    tau.insert(0, "track", track)
    tau["label"] = tau["measure"].map(labels)
    tau["valid"] = [
        bool(valid_map.get((k, c), True))
        for k, c in zip(tau["kind"], tau["condition"], strict=True)
    ]
    power = _power(track, pairs, labels, valid_map, norel_map, len(topic_list), alpha)
    loto = _changes(
        scores, "leave_one_team_out", sel, labels, valid_map.loc["leave_one_team_out"].to_dict()
    )
    take1 = _changes(scores, "take_one_team", sel, labels, valid_map.loc["take_one_team"].to_dict())
    summary = _summary(track, tau, power, labels)
    dagger = validity[validity["kind"] == "take_one_team"].set_index("condition")["valid"]
    star = set(dict(conds["take_three_teams"]).get("smallest-unique", ()))
    selected = sel.assign(
        track=track,
        dagger=~sel["team"].map(dagger).fillna(True).astype(bool),
        star=sel["team"].isin(star),
    )[["track", "team", "name", "n_runs", "unique_docs", "unique_rel", "dagger", "star"]]
    out = {
        "collection": collection_table(track, runs, qrels, orgs, pooled, depth),
        "scores": scores,
        "selected": selected,
        "leave_one_team_out": loto,
        "take_one_team": take1,
        "tau": tau,
        "power": power,
        "summary": summary,
    }
    out["claims"] = claims_table(out, track)
    return out


def _summary(track: str, tau: pd.DataFrame, power: pd.DataFrame, labels) -> pd.DataFrame:
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


def run(
    root=None, out="out/sakai2008", jobs: int | None = None, dask=None, progress=None, **params
) -> dict[str, pd.DataFrame]:
    """Run the experiment on every track under ``root`` (or ``synthetic=True``), write the
    Parquet files, ``claims.md`` and the figures to ``out`` (None: write nothing) and return
    the frames by name.

    ``params``: ``seed``, ``B``, ``alpha``, ``combos``, ``depths``, ``rbp_p``, ``depth`` (pool
    depth override), ``topics``, ``lenient``, ``synthetic`` (defaults in :data:`DEFAULTS`).
    """

    def per_track(t: _common.Track, p: dict, jobs: int) -> dict:
        return run_track(
            t.name,
            t.runs,
            t.qrels,
            t.orgs,
            jobs=jobs,
            dask=dask,
            seed=p["seed"],
            B=p["B"],
            alpha=p["alpha"],
            combos=p["combos"],
            depths=p["depths"],
            rbp_p=p["rbp_p"],
            depth=p["depth"] or t.depth or None,
            topics=p["topics"],
            pooled=None if p["depth"] else (t.pooled or None),
            progress=progress,
        )

    return _common.run_tracks(
        "sakai2008",
        root,
        out,
        DEFAULTS,
        params,
        per_track,
        jobs=jobs,
        plot=figures,
        title=TITLE,
        progress=progress,
    )


# --------------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------------


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


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m pbtools.papers.sakai2008 ROOT [-o DIR] [--jobs N]``."""
    ap = _common.parser(
        __doc__,
        "out/sakai2008",
        DEFAULTS["seed"],
        "seed of the run selection and of the bootstrap resamples",
    )
    ap.add_argument("--B", type=int, default=DEFAULTS["B"], help="bootstrap resamples (1000)")
    ap.add_argument("--alpha", type=float, default=DEFAULTS["alpha"], help="test level (0.05)")
    ap.add_argument(
        "--combos",
        type=int,
        default=DEFAULTS["combos"],
        help="departure: add N random take-three-teams combinations to Sakai's three teams "
        "with the fewest unique contributions (default 0, as the paper)",
    )
    ap.add_argument(
        "--depths",
        type=int,
        nargs="+",
        default=list(DEFAULTS["depths"]),
        help="shallow pool depths (50 10 1, as the paper)",
    )
    ap.add_argument("--rbp-p", type=float, default=DEFAULTS["rbp_p"], help="RBP p (0.95)")
    ap.add_argument("--depth", type=int, default=None, help="pool depth (default: inferred)")
    ap.add_argument(
        "--answered-topics",
        action="store_true",
        help="departure: take every score and test over the topics all selected runs "
        "answered (default: every topic, a topic a run did not answer scoring 0)",
    )
    _common.add_seed_check(ap)
    a = _common.parse_args(ap, argv)
    t0 = time.perf_counter()
    params = dict(
        B=a.B,
        alpha=a.alpha,
        combos=a.combos,
        depths=tuple(a.depths),
        rbp_p=a.rbp_p,
        depth=a.depth,
        topics="answered" if a.answered_topics else "all",
    )
    return _common.run_main(ap, a, run, report, t0, **params)


if __name__ == "__main__":
    sys.exit(main())
