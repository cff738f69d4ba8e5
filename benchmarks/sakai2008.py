"""Sakai (2008), "On the robustness of information retrieval metrics to biased assessments".

Reproduces, on any collection in the TREC layout, the experiments of Sakai's §5-§7 for the nine
metrics AP', Q', nDCG', RBP', bpref (condensed-list metrics) and AP, Q, nDCG, RBP:

* **Table 3** (leave-one-team-out, system bias): one randomly selected (seeded) pooled run per
  team is evaluated with J − U_t, the relevance data without the documents only team t pooled;
  score change (%) and rank change among the selected runs.
* **Table 4** (take-one-team): the same with J replaced by D_t, team t's pooled documents.
* **Table 5** (rank stability): Kendall's τ-b between the ranking of the selected runs under the
  full relevance data and under take-one-team (averaged over the teams that found a relevant
  document on every topic, Sakai's "†" rule) and take-three-teams data. Sakai chose the three
  teams with the fewest unique contributions; this script reports that combination
  (``smallest-unique``) and the mean over ``--combos`` seeded random 3-team combinations.
* **Tables 6-7** (discriminative power): share of run pairs significant at ``--alpha`` by Sakai's
  two-sided paired bootstrap test (``--B`` resamples, one seeded resample matrix shared by all
  conditions), and misses / false alarms against the full relevance data.
* **Tables 8-10** (pool-depth bias): τ, discriminative power, misses and false alarms for
  shallow pools of depth ``--depths`` (50, 10, 1) formed from every pooled run.

Measures (``pbtools.measures`` names): ``AP(judged_only=True)`` … are the condensed-list
versions. Differences from the paper: TREC-2 has binary relevance (Sakai used graded TREC
robust / NTCIR data, so Q and nDCG here use gain 1); ``nDCG`` is trec_eval's (log2(r+1)
discount over the whole ranking) rather than Sakai's original nDCG@1000 with log base 2 and no
discount for ranks ≤ 2; RBP uses p = 0.95 as in the paper (``--rbp-p``).

Usage::

    python benchmarks/sakai2008.py ../shared/data/trec/TREC-2/Adhoc --lenient
    python benchmarks/sakai2008.py ../shared/data/trec          # every track under ROOT
    python benchmarks/sakai2008.py --synthetic -o out/sakai_synth
    python benchmarks/sakai2008.py ROOT --jobs 4 --dask tcp://scheduler:8786

Outputs in ``-o DIR`` (default ``out/sakai2008/``), Parquet with the parameters as metadata:

``scores.parquet``
    ``track``, ``kind``, ``condition``, ``name``, ``measure``, ``value``: mean scores of the
    selected runs under every condition (kind ∈ full, leave_one_team_out, take_one_team,
    take_three_teams, shallow).
``selected.parquet``
    ``track``, ``team``, ``name``, ``n_runs``, ``unique_docs``, ``unique_rel`` (per topic).
``leave_one_team_out.parquet`` / ``take_one_team.parquet`` (Tables 3 / 4)
    ``track``, ``team``, ``name``, ``measure``, ``label``, ``full``, ``reduced``,
    ``change_pct``, ``rank_full``, ``rank_reduced``, ``valid``.
``tau.parquet`` (Tables 5, 8)
    ``track``, ``kind``, ``condition``, ``measure``, ``label``, ``tau``, ``valid``.
``power.parquet`` (Tables 6, 7, 9, 10)
    ``track``, ``kind``, ``condition``, ``measure``, ``label``, ``n_pairs``, ``n_significant``,
    ``share_significant``, ``required_difference``, ``misses``, ``false_alarms``,
    ``topics_without_rel``, ``valid`` (False: a take-teams condition without a relevant
    document on some topic, excluded from the averages as Sakai's "†" teams).
``summary.parquet``
    ``track``, ``kind``, ``condition`` (``mean`` for averaged kinds, ``pd=…`` for shallow
    pools, ``smallest-unique`` for Sakai's own take-three-teams choice), ``measure``, ``label``,
    ``tau``, ``share_significant``, ``required_difference``, ``misses``, ``false_alarms``,
    ``n_conditions`` (valid conditions averaged).

Plots: ``loto_change.png`` (Table 3 score changes), ``tau.png`` (Tables 5, 8), ``power.png``
(Tables 6, 9).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import _common  # noqa: E402  (puts the repository on sys.path for pbtools)

from pbtools import grid, measures, pooling, stats  # noqa: E402
from pbtools.frames import judge  # noqa: E402
from pbtools.pooling import inference  # noqa: E402

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
KINDS = ("full", "leave_one_team_out", "take_one_team", "take_three_teams", "shallow")
DEFAULTS = dict(
    seed=2008,
    B=1000,
    alpha=0.05,
    combos=10,
    depths=(50, 10, 1),
    rbp_p=0.95,
    depth=None,
    lenient=True,
    synthetic=False,
)


# --------------------------------------------------------------------------------------------
# collections
# --------------------------------------------------------------------------------------------


def pool_setup(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    depth: int | None = None,
) -> tuple[list[str], int]:
    """The pooled runs and the pool depth (pbtools.pooling.infer_pool; ``depth`` fixes d)."""
    info = inference.infer_pool(runs, qrels, depth=depth)
    return sorted(map(str, info.pooled_runs)), int(info.depth)


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
        parts = [qrels.assign(condition=names[0])]
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
        parts = [red.rename(columns={"left_out": "condition"})]
    elif kind in ("take_one_team", "take_three_teams"):
        combos = [sorted(teams) for _, teams in conditions]
        red = pooling.take_teams(runs, qrels, depth, orgs=orgs, combos=combos, pooled=pooled)
        label = {pooling.SEP.join(c): name for c, (name, _) in zip(combos, conditions, strict=True)}
        parts = [red.rename(columns={"kept": "condition"})]
        parts[0]["condition"] = parts[0]["condition"].astype("str").map(label)
    elif kind == "shallow":
        ds = [d for _, (d,) in conditions]
        red = pooling.shallow(runs, qrels, ds, pooled=pooled)
        label = {d: name for d, (name, _) in zip(ds, conditions, strict=True)}
        parts = [red.assign(condition=red["depth"].map(label)).drop(columns="depth")]
    else:
        raise ValueError(f"unknown kind {kind!r}")
    out = pd.concat(parts, ignore_index=True)
    out["condition"] = out["condition"].astype("str")
    return out[["qid", "docno", "label", "condition"]]


def _balanced(pt: pd.DataFrame) -> pd.DataFrame:
    """Keep the topics every run of the frame was evaluated on (a balanced runs × topics)."""
    n_runs = pt["name"].nunique()
    per_q = pt.groupby("qid", observed=True)["name"].nunique()
    keep = per_q.index[per_q.to_numpy() == n_runs]
    return pt[pt["qid"].isin(keep)]


def evaluate_conditions(
    kind: str,
    conditions: list[tuple[str, tuple]],
    *,
    runs,
    qrels,
    orgs,
    pooled,
    depth,
    selected,
    metric_names,
    B,
    alpha,
    boot_seed,
) -> dict:
    """One grid task: score the selected runs under each condition and test every run pair.

    Returns ``per_topic`` (``kind``, ``condition``, ``name``, ``qid``, ``measure``, ``value``),
    ``pairs`` (``kind``, ``condition``, ``measure``, ``name_a``, ``name_b``, ``diff``,
    ``significant``, ``required_diff``) and ``validity`` (``kind``, ``condition``,
    ``topics_without_rel``).
    """
    red = reduced_qrels(kind, conditions, qrels, runs, orgs, pooled, depth)
    sel = runs[runs["name"].astype("str").isin(selected)]
    pt = measures.evaluate(sel, red, metric_names, keys=["condition"], per_topic=True)
    pt = pt.drop(columns=[c for c in ("residual",) if c in pt.columns])
    pt["condition"] = pt["condition"].astype("str")
    pt["measure"] = pt["measure"].astype("str")
    # Sakai's † rule: a condition without a relevant document on some topic is not valid
    all_q = qrels["qid"].astype("str").unique()
    rel = red[red["label"] > 0]
    n_rel_q = rel.groupby("condition", observed=True)["qid"].nunique()
    validity = pd.DataFrame({"kind": kind, "condition": [c for c, _ in conditions]})
    validity["topics_without_rel"] = [
        len(all_q) - int(n_rel_q.get(c, 0)) for c in validity["condition"]
    ]
    pairs = []
    for (cond, meas), g in pt.groupby(["condition", "measure"], sort=False):
        dp = stats.discriminative_power(_balanced(g), B=B, alpha=alpha, seed=boot_seed)
        pairs.append(
            dp[["name_a", "name_b", "diff", "significant", "required_diff"]].assign(
                condition=cond, measure=meas
            )
        )
    pairs = pd.concat(pairs, ignore_index=True).assign(kind=kind)
    pt = pt.assign(kind=kind)
    return {"per_topic": pt, "pairs": pairs, "validity": validity}


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
    for t, g in df.groupby("team", sort=True):
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


def _conditions(
    teams: list[str],
    sel: pd.DataFrame,
    uniq: pd.DataFrame,
    combos: int,
    depths,
    depth: int,
    seed: int,
) -> dict[str, list[tuple[str, tuple]]]:
    """Every condition of the experiment, per kind."""
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
        while len(seen) < min(combos + 1, n_possible):
            c = tuple(sorted(rng.choice(teams, size=3, replace=False).tolist()))
            if c not in seen:
                seen.add(c)
                three.append((f"sample-{len(three):02d}", c))
    conds["take_three_teams"] = three
    return conds


def _label(metric_names: list[str]) -> dict[str, str]:
    return {m: lab for (lab, _), m in zip(METRICS, metric_names, strict=True)}


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
    combos: int = 10,
    depths=(50, 10, 1),
    rbp_p: float = 0.95,
    depth: int | None = None,
    pooled: list[str] | None = None,
    progress=None,
) -> dict:
    """The whole experiment on one collection; returns the frames of :func:`run` (one track).

    ``pooled``/``depth``: the pooled runs and pool depth (default: inferred from the qrels).
    """
    if pooled is None:
        pooled, depth = pool_setup(runs, qrels, depth)
    metric_names = [measures.measure_names([m.format(p=rbp_p)])[0] for _, m in METRICS]
    labels = _label(metric_names)
    sel = select_runs(pooled, orgs, seed)
    teams = sel["team"].tolist()
    uniq = unique_per_team(runs, qrels, orgs, pooled, depth)
    sel = sel.merge(uniq, on="team", how="left").fillna({"unique_docs": 0.0, "unique_rel": 0.0})
    conds = _conditions(teams, sel, uniq, combos, depths, depth, seed)
    chunk = max(1, -(-len(teams) // max(2 * (jobs or grid.default_jobs()), 1)))
    params = []
    for kind in KINDS:
        cs = conds[kind]
        for k in range(0, len(cs), chunk):
            params.append({"kind": kind, "conditions": cs[k : k + chunk]})
    shared = dict(
        runs=runs,
        qrels=qrels,
        orgs=orgs,
        pooled=pooled,
        depth=depth,
        selected=sel["name"].tolist(),
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
    # Sakai's † rule applies to the take-teams data only; shallow pools keep every topic
    validity["valid"] = (validity["topics_without_rel"] == 0) | ~validity["kind"].isin(
        ["take_one_team", "take_three_teams"]
    )
    valid_map = validity.set_index(["kind", "condition"])["valid"]
    norel_map = validity.set_index(["kind", "condition"])["topics_without_rel"]

    scores = (
        pt.groupby(["kind", "condition", "name", "measure"], sort=False, observed=True)["value"]
        .mean()
        .reset_index()
    )
    scores["name"] = scores["name"].astype("str")
    scores.insert(0, "track", track)
    # Kendall tau (Tables 5, 8)
    full = scores[scores["kind"] == "full"][["name", "measure", "value"]]
    other = scores[scores["kind"] != "full"]
    tau_in = other.merge(full, on=["name", "measure"], suffixes=("", "_full"))
    tau_in = tau_in.rename(columns={"value_full": "true", "value": "estimate"})
    tau = stats.kendall_tau_by(
        tau_in[["kind", "condition", "measure", "name", "true", "estimate"]],
        by=["kind", "condition", "measure"],
    )
    tau.insert(0, "track", track)
    tau["label"] = tau["measure"].map(labels)
    tau["valid"] = [
        bool(valid_map.get((k, c), True))
        for k, c in zip(tau["kind"], tau["condition"], strict=True)
    ]
    # discriminative power, misses, false alarms (Tables 6, 7, 9, 10)
    rows = []
    full_pairs = pairs[pairs["kind"] == "full"]
    for (kind, cond, meas), g in pairs.groupby(["kind", "condition", "measure"], sort=False):
        f = full_pairs[full_pairs["measure"] == meas]
        mf = stats.misses_false_alarms(f, g).iloc[0]
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
                "valid": bool(valid_map.get((kind, cond), True)),
            }
        )
    power = pd.DataFrame(rows)
    loto = _changes(
        scores, "leave_one_team_out", sel, labels, valid_map.loc["leave_one_team_out"].to_dict()
    )
    take1 = _changes(scores, "take_one_team", sel, labels, valid_map.loc["take_one_team"].to_dict())
    summary = _summary(track, tau, power, labels)
    selected = sel.assign(track=track)[
        ["track", "team", "name", "n_runs", "unique_docs", "unique_rel"]
    ]
    return {
        "scores": scores,
        "selected": selected,
        "leave_one_team_out": loto,
        "take_one_team": take1,
        "tau": tau,
        "power": power,
        "summary": summary,
    }


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
    Parquet files and plots to ``out`` (None: write nothing) and return the frames by name.

    ``params``: ``seed``, ``B``, ``alpha``, ``combos``, ``depths``, ``rbp_p``, ``depth`` (pool
    depth override), ``lenient``, ``synthetic`` (defaults in :data:`DEFAULTS`).
    """

    def per_track(t: _common.Track, p: dict, jobs: int) -> dict:
        # real tracks are loaded with infer=False: the pool is inferred in run_track, with
        # the --depth override
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
            pooled=t.pooled or None,
            progress=progress,
        )

    return _common.run_tracks(
        "sakai2008", root, out, DEFAULTS, params, per_track, jobs=jobs, plot=plot, infer=False
    )


# --------------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------------


def plot(result: dict[str, pd.DataFrame], out: Path) -> None:
    """``loto_change.png``, ``tau.png`` and ``power.png`` (matplotlib, Agg backend)."""
    plt = _common.pyplot()
    order = [lab for lab, _ in METRICS]
    for track, loto in result["leave_one_team_out"].groupby("track", sort=False):
        suffix = _common.plot_suffix(result["leave_one_team_out"], track)
        fig, ax = plt.subplots(figsize=(8, 4))
        data = [loto.loc[loto["label"] == lab, "change_pct"].dropna().to_numpy() for lab in order]
        ax.boxplot(data, tick_labels=order)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_ylabel("score change (%)")
        ax.set_title(f"Leave-one-team-out score change of each team's run ({track})")
        fig.tight_layout()
        fig.savefig(out / f"loto_change{suffix}.png", dpi=120)
        plt.close(fig)

        summ = result["summary"][result["summary"]["track"] == track]
        for what, fname, ylabel in (
            ("tau", "tau", "Kendall's τ vs full"),
            ("share_significant", "power", "discriminative power"),
        ):
            fig, ax = plt.subplots(figsize=(9, 4.6))
            groups = summ[
                (summ["condition"] != "smallest-unique")
                & ~((summ["kind"] == "full") & (what == "tau"))
            ]
            keys = list(dict.fromkeys(zip(groups["kind"], groups["condition"], strict=True)))
            width = 0.8 / max(len(keys), 1)
            x = np.arange(len(order))
            for i, (k, c) in enumerate(keys):
                g = groups[(groups["kind"] == k) & (groups["condition"] == c)]
                v = g.set_index("label")[what].reindex(order).to_numpy(dtype=float)
                ax.bar(x + i * width, v, width, label=k if c in ("mean", "full") else c)
            ax.set_xticks(x + width * (len(keys) - 1) / 2, order)
            ax.set_ylabel(ylabel)
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize=7, ncol=6, loc="upper center", bbox_to_anchor=(0.5, -0.08))
            ax.set_title(f"Sakai 2008: {ylabel} ({track})")
            fig.tight_layout()
            fig.savefig(out / f"{fname}{suffix}.png", dpi=120)
            plt.close(fig)


def _pivot(df: pd.DataFrame, index, value: str) -> pd.DataFrame:
    order = [lab for lab, _ in METRICS]
    p = df.pivot_table(
        index=index, columns="label", values=value, aggfunc="first", sort=False, observed=True
    )
    return p.reindex(columns=[c for c in order if c in p.columns])


def report(result: dict[str, pd.DataFrame]) -> str:
    """Readable terminal tables (Tables 3, 5-10 layouts)."""
    lines = []
    pd.set_option("display.width", 160)
    for track in result["scores"]["track"].unique():
        lines.append(f"\n=== Sakai 2008 on {track} ===")
        loto = result["leave_one_team_out"]
        loto = loto[loto["track"] == track]
        lines.append("\nTable 3: leave-one-team-out score change (%) of each team's run")
        lines.append(_pivot(loto, ["team", "name"], "change_pct").round(2).to_string())
        mean = loto.groupby("label", sort=False)["change_pct"].mean()
        lines.append(
            "mean change (%): "
            + ", ".join(f"{lab} {mean.get(lab, np.nan):+.2f}" for lab, _ in METRICS)
        )
        moved = loto.assign(moved=loto["rank_full"] != loto["rank_reduced"])
        lines.append(
            "runs whose rank changed: "
            + ", ".join(
                f"{lab} {int(moved[moved['label'] == lab]['moved'].sum())}" for lab, _ in METRICS
            )
        )
        s = result["summary"]
        s = s[s["track"] == track].assign(row=lambda d: d["kind"] + " " + d["condition"])
        lines.append("\nTables 5, 8: Kendall's tau vs the full relevance data")
        lines.append(_pivot(s[s["kind"] != "full"], "row", "tau").round(3).to_string())
        lines.append("\nTables 6, 7, 9, 10: discriminative power (alpha as run)")
        lines.append(_pivot(s, "row", "share_significant").round(3).to_string())
        lines.append("\nmisses (mean over conditions)")
        lines.append(_pivot(s[s["kind"] != "full"], "row", "misses").round(2).to_string())
        lines.append("\nfalse alarms (mean over conditions)")
        lines.append(_pivot(s[s["kind"] != "full"], "row", "false_alarms").round(2).to_string())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python benchmarks/sakai2008.py ROOT [-o DIR] [--jobs N] [--dask ADDR]``."""
    ap = _common.parser(__doc__, "out/sakai2008", DEFAULTS["seed"])
    ap.add_argument("--B", type=int, default=DEFAULTS["B"], help="bootstrap resamples")
    ap.add_argument("--alpha", type=float, default=DEFAULTS["alpha"])
    ap.add_argument(
        "--combos",
        type=int,
        default=DEFAULTS["combos"],
        help="random take-three-teams combinations",
    )
    ap.add_argument(
        "--depths",
        type=int,
        nargs="+",
        default=list(DEFAULTS["depths"]),
        help="shallow pool depths",
    )
    ap.add_argument("--rbp-p", type=float, default=DEFAULTS["rbp_p"])
    ap.add_argument("--depth", type=int, default=None, help="pool depth (default: inferred)")
    a = _common.parse_args(ap, argv)
    t0 = time.perf_counter()
    result = run(
        a.root,
        a.out,
        **_common.common_params(a),
        B=a.B,
        alpha=a.alpha,
        combos=a.combos,
        depths=tuple(a.depths),
        rbp_p=a.rbp_p,
        depth=a.depth,
    )
    return _common.finish(result, report, a.out, t0)


if __name__ == "__main__":
    sys.exit(main())
