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

import pandas as pd

from pbtools import grid, measures, stats
from pbtools.papers import common as _common
from pbtools.papers.sakai2008_claims import (  # noqa: F401  (CLAIMS: the declared catalogue)
    CLAIMS,
    LABELS,
    claims_table,
)
from pbtools.papers.sakai2008_conditions import (  # noqa: F401  (public here as before)
    evaluate_conditions,
    experiment_conditions,
    reduced_qrels,
    select_runs,
    unique_per_team,
)
from pbtools.papers.sakai2008_report import COLOURS, figures, report  # noqa: F401
from pbtools.papers.sakai2008_tables import (
    change_table,
    collection_table,
    power_table,
    summary_table,
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


# --------------------------------------------------------------------------------------------
# the experiment
# --------------------------------------------------------------------------------------------


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
    conds = experiment_conditions(teams, uniq, combos, depths, depth, seed)
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
    power = power_table(track, pairs, labels, valid_map, norel_map, len(topic_list), alpha)
    loto = change_table(
        scores, "leave_one_team_out", sel, labels, valid_map.loc["leave_one_team_out"].to_dict()
    )
    take1 = change_table(
        scores, "take_one_team", sel, labels, valid_map.loc["take_one_team"].to_dict()
    )
    summary = summary_table(track, tau, power, labels)
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
