"""Fixed-cost pooling strategies and the bias of the collections they build (Lipani et al.).

For every track under ROOT, every strategy and every budget (judgments per topic, default 10 to
100), the strategy is replayed over the track's pooled runs with its qrels as the assessor
(``pbtools.pooling.Pool.simulate``: a document the track never judged is recorded as unjudged
and still costs one judgment), and the simulated pool is measured two ways at equal cost:

(a) **error against the full judgments** — every run's score on the simulated qrels against its
    score on the track's qrels (``pbtools.measures.evaluate``: P@10, AP, nDCG@10, RBP(p=0.8)@10),
    summarised by MAE, SRE and Kendall's τ-b (``pbtools.stats``);
(b) **pool bias and its correction** (Lipani et al., ECIR 2016: the corrections on pools not
    built by depth-d) — the leave-one-organization-out experiment on the simulated pool
    (``pbtools.experiments.leave_one_out_experiment`` on ``(runs, simulated qrels, orgs)``, the
    strategy's pooled runs, its contribution depth): the MAE of the reduced pool is the pool's
    bias at P@10, and each estimator's MAE says how much of it it corrects.

**The verdict.** Lipani, Zuccon, Lupu, Koopman & Hanbury (ICTIR 2016, "The impact of fixed-cost
pooling strategies on test collection bias") found on 15 collections that RBP-based selection
gives the least biased pools for precision-oriented measures. Here the finding *holds* on a track
when, against the full judgments (a), the strategy with the lowest MAE averaged over the budgets
is RBP-based (``rbp``, ``rbpb``, ``rbpc``) for both P@10 and RBP(p=0.8)@10. The lowest
leave-one-organization-out bias (b) is reported beside it, with a caveat: it only counts the
documents unique to an organisation within the pool's contribution depth, so strategies that
judge deep documents (Borda, CombSUM, RRF reach ranks 100-200 on TREC-2) look unbiased by
construction. Sampling strategies (``uniform``, ``stratified``) are left out of that verdict:
their pools are meant for estimators that weigh each judgment by its inclusion probability.
They are scored both ways (column ``scored_by``): with the plain measures on their sampled
qrels, and with their own estimators (:data:`ESTIMATORS`, :mod:`pbtools.measures.sampled`:
trec_eval's infAP for ``uniform``, xinfAP for ``stratified``, statAP for both, inferred P@10);
the verdict names the best sampling strategy and estimator at AP beside the best non-sampling
strategy. ``tests/pooling/test_strategies.py`` checks the verdict.

Depth-d pooling is represented by ``take`` (Take@N), its fixed-cost form: judging the first N
documents by best rank is the depth-d pool whenever N is that pool's size.

Usage::

    python benchmarks/pooling_strategies.py                       # ../shared/data/trec
    python benchmarks/pooling_strategies.py ../shared/data/trec/TREC-2/Adhoc --budgets 10 50 100
    python benchmarks/pooling_strategies.py --synthetic --strategies take rbp:0.8 mtf

Outputs in ``-o DIR`` (default ``out/pooling_strategies/``):

``errors.parquet``   ``track``, ``strategy``, ``budget``, ``cost`` (judgments), ``depth`` (the
                     contribution depth), ``measure``, ``scored_by`` (``plain`` or the
                     estimator), ``mae``, ``sre``, ``tau`` — (a)
``bias.parquet``     ``track``, ``strategy``, ``budget``, ``cost``, ``depth``, ``measure`` (P@10),
                     ``estimator``, ``mae``, ``sre``, ``corrected`` (share of the reduced pool's
                     MAE removed) — (b)
``timings.parquet``  ``track``, ``strategy``, ``budget``, ``seconds`` (the simulation)
``verdict.parquet``  ``track``, ``holds``, ``best_P@10``, ``mae_P@10``, ``best_RBP@10``,
                     ``mae_RBP@10``, ``best_bias``, ``bias``, ``best_rbp_bias``, ``rbp_bias``,
                     ``best_sampler_AP``, ``sampler_estimator_AP``, ``sampler_mae_AP``,
                     ``sampler_plain_mae_AP``, ``statement`` (:func:`verdict`)
``pooling_strategies.md`` (the tables), ``error_vs_budget.png`` / ``.svg`` (figure).
"""

from __future__ import annotations

import inspect
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from pbtools import experiments, grid, measures, pooling, stats  # noqa: E402
from pbtools.measures.sampled import evaluate_sampled  # noqa: E402
from pbtools.papers import common as _common  # noqa: E402
from pbtools.pooling import Pool, strategies  # noqa: E402

#: the strategies compared (spec strings of pbtools.pooling.strategies.parse)
STRATEGIES = (
    "take",
    "rbp:0.8",
    "rbpb:0.8",
    "rbpc:0.8",
    "mtf",
    "hedge:0.1",
    "maxmean",
    "rrf:60",
    "borda",
    "combsum",
    "uniform:100",
    "stratified",
)
RBP_BASED = ("rbp", "rbpb", "rbpc")
#: sampled pools are meant for estimators (infAP, statAP) that weigh judgments by their
#: inclusion probability, not for scoring runs directly: reported, but not in the ICTIR verdict
SAMPLERS = ("uniform", "stratified")
#: each sampling strategy's own estimators (pbtools.measures.sampled), per measure estimated
ESTIMATORS = {
    "uniform": {"AP": ("infAP", "statAP"), "P@10": ("infP@10",)},
    "stratified": {"AP": ("xinfAP", "statAP"), "P@10": ("infP@10",)},
}
MEASURES = ("P@10", "AP", "nDCG@10", "RBP(p=0.8)@10")
DEFAULTS = dict(
    strategies=STRATEGIES,
    budgets=tuple(range(10, 101, 10)),
    measures=MEASURES,
    cutoffs=(10,),
    estimators=("reduced", "webber", "lipani"),
    topics=None,
    lenient=True,
    synthetic=False,
    seed=2016,
)
DEFAULT_ROOT = HERE.parent.parent / "shared" / "data" / "trec"


def with_measure(frame: pd.DataFrame) -> pd.DataFrame:
    """The leave-one-out result with a ``measure`` column (``"P@10"``), whichever API made it:
    the current one names the cut-off of P@n in ``n``, the rewritten one the measure."""
    if "measure" in frame.columns:
        out = frame.assign(measure=frame["measure"].astype(str))
    else:
        out = frame.assign(measure="P@" + frame["n"].astype(np.int64).astype(str))
    return out.drop(columns=[c for c in ("n",) if c in out.columns])


def leave_one_org_out(runs, qrels, orgs, pool: Pool, cutoffs, estimators) -> pd.DataFrame:
    """(b): the leave-one-organization-out experiment on the simulated pool at P@n for ``cutoffs``,
    with the strategy's pooled runs and contribution depth. Works with both experiment APIs:
    ``measures=``/``leave_out=`` (current) and ``cutoffs=``/``by=`` (before the rewrite)."""
    fn = experiments.leave_one_out_experiment
    params = inspect.signature(fn).parameters
    if "measures" in params:
        what = {"measures": [f"P@{int(n)}" for n in cutoffs], "leave_out": "org"}
    else:
        what = {"cutoffs": tuple(cutoffs), "by": "org"}
    res = fn(
        (runs, qrels, orgs),
        runs="all",
        estimators=tuple(estimators),
        pooled=pool.pooled,
        depth=max(pool.depth, 1),
        **what,
    )
    return with_measure(res)


def task(
    strategy,
    budget,
    *,
    runs,
    qrels,
    orgs,
    pooled,
    problem,
    truth,
    measures_,
    cutoffs,
    estimators,
    seed,
):
    """One (strategy, budget): simulate, then (a) and (b)."""
    t0 = time.perf_counter()
    pool = Pool.simulate(runs, qrels, strategy, budget, seed=seed, pooled=pooled, problem=problem)
    seconds = time.perf_counter() - t0
    est = measures.evaluate(runs, pool.qrels, list(measures_), warn=False)
    est = est.astype({"name": str, "measure": str}).assign(scored_by="plain")
    wanted = {e: m for m, es in ESTIMATORS.get(family(pool.strategy.spec), {}).items() for e in es}
    wanted = {e: m for e, m in wanted.items() if m in measures_}
    if wanted:  # the sampled pool's universe, scored by the strategy's own estimators
        sq = pooling.sampled_qrels(pool, problem)
        by_est = evaluate_sampled(runs, sq, list(wanted)).astype({"name": str, "measure": str})
        by_est = by_est.assign(scored_by=by_est["measure"], measure=by_est["measure"].map(wanted))
        est = pd.concat([est, by_est], ignore_index=True)
    frame = truth.merge(est.rename(columns={"value": "estimate"}), on=["name", "measure"])
    keys = ["measure", "scored_by"]
    a = stats.mae(frame, by=keys).merge(stats.sre(frame, by=keys), on=keys)
    a = a.merge(stats.kendall_tau(frame[["name", *keys, "true", "estimate"]], by=keys))
    loo = leave_one_org_out(runs, pool.qrels, orgs, pool, cutoffs, estimators)
    bkeys = ["measure", "estimator"]
    b = stats.mae(loo, by=bkeys).merge(stats.sre(loo, by=bkeys), on=bkeys)
    red = b[b["estimator"] == "reduced"].set_index("measure")["mae"]
    b["corrected"] = 1 - b["mae"] / b["measure"].map(red).replace(0, np.nan)
    meta = {
        "strategy": pool.strategy.spec,
        "budget": int(budget),
        "cost": pool.cost,
        "depth": pool.depth,
    }
    return {
        "errors": a.assign(**meta),
        "bias": b.assign(**meta),
        "timings": pd.DataFrame([{**meta, "seconds": seconds}]),
    }


def first_topics(runs, qrels, n):
    """Runs and qrels restricted to the first ``n`` qrels topics (None: all)."""
    if n is None:
        return runs, qrels
    keep = sorted(qrels["qid"].astype(str).unique())[: int(n)]
    return runs[runs["qid"].astype(str).isin(keep)], qrels[qrels["qid"].astype(str).isin(keep)]


def run_track(track: _common.Track, p: dict, jobs: int = 1, dask=None, progress=None) -> dict:
    """Every (strategy, budget) on one track."""
    specs = [strategies.parse(s).spec for s in p["strategies"]]  # refuse bad specs first
    runs, qrels = first_topics(track.runs, track.qrels, p["topics"])
    truth = measures.evaluate(runs, qrels, list(p["measures"]), warn=False)
    truth = truth.astype({"name": str, "measure": str}).rename(columns={"value": "true"})
    shared = dict(
        runs=runs,
        qrels=qrels,
        orgs=track.orgs,
        pooled=track.pooled,
        problem=strategies.PoolingTask(runs, qrels, track.pooled),
        truth=truth,
        measures_=tuple(p["measures"]),
        cutoffs=tuple(p["cutoffs"]),
        estimators=tuple(p["estimators"]),
        seed=p["seed"],
    )
    configs = grid.product(strategy=specs, budget=[int(b) for b in p["budgets"]])
    res = grid.run_grid(
        task,
        configs,
        jobs=jobs,
        dask=dask,
        shared=shared,
        progress=progress,
        desc=f"pooling strategies {track.name}",
    )
    out = {k: pd.concat([r[k] for r in res], ignore_index=True) for k in res[0]}
    for df in out.values():
        df.insert(0, "track", track.name)
    cols = {
        "errors": [
            "track",
            "strategy",
            "budget",
            "cost",
            "depth",
            "measure",
            "scored_by",
            "mae",
            "sre",
            "tau",
        ],
        "bias": [
            "track",
            "strategy",
            "budget",
            "cost",
            "depth",
            "measure",
            "estimator",
            "mae",
            "sre",
            "corrected",
        ],
        "timings": ["track", "strategy", "budget", "cost", "seconds"],
    }
    out = {k: out[k][c] for k, c in cols.items()}
    out["verdict"] = verdict(out["bias"], out["errors"])
    return out


def family(spec: str) -> str:
    """The registry name of a spec (``"rbp:0.8"`` → ``"rbp"``)."""
    return spec.split(":")[0]


def plain(errors: pd.DataFrame) -> pd.DataFrame:
    """The rows of the plain measures (not a sampling strategy's estimator)."""
    if "scored_by" not in errors.columns:
        return errors
    return errors[errors["scored_by"] == "plain"]


def best_sampler(errors: pd.DataFrame, measure: str = "AP") -> dict:
    """The sampling strategy and estimator of lowest mean MAE at ``measure`` over the budgets,
    its MAE and that of the plain measure on the same sampled qrels (empty when none ran)."""
    if "scored_by" not in errors.columns:
        return {}
    sampler = np.array([family(s) in SAMPLERS for s in errors["strategy"]], dtype=bool)
    e = errors[(errors["measure"] == measure).to_numpy() & sampler]
    est = e[e["scored_by"] != "plain"]
    if not len(est):
        return {}
    mean = est.groupby(["strategy", "scored_by"])["mae"].mean().sort_values(kind="stable")
    (spec, by), mae = mean.index[0], float(mean.iloc[0])
    raw = e[(e["strategy"] == spec) & (e["scored_by"] == "plain")]["mae"].mean()
    return {"sampler": spec, "estimator": by, "mae": mae, "plain_mae": float(raw)}


def _best(frame: pd.DataFrame) -> tuple[str, float]:
    """The strategy of lowest mean ``mae`` over the budgets (non-sampling strategies only)."""
    keep = frame[[family(s) not in SAMPLERS for s in frame["strategy"]]]
    if keep.groupby("strategy")["budget"].apply(frozenset).nunique() > 1:
        raise ValueError("the strategies were not run at the same budgets")
    mean = keep.groupby("strategy")["mae"].mean().sort_values(kind="stable")
    return (str(mean.index[0]), float(mean.iloc[0])) if len(mean) else ("", np.nan)


def verdict(bias: pd.DataFrame, errors: pd.DataFrame) -> pd.DataFrame:
    """Per track: does RBP-based selection give the least biased pools for precision measures?

    The finding *holds* when, against the full judgments (a), the strategy of lowest MAE averaged
    over the budgets is RBP-based for both precision-oriented measures, P@10 and RBP(p=0.8)@10
    (every strategy run at the same budgets; sampling strategies, :data:`SAMPLERS`, left out).
    The lowest leave-one-organization-out bias (b) of the reduced pool at P@10 is reported
    beside it. Columns: ``track``, ``holds``, ``best_P@10``, ``mae_P@10``, ``best_RBP@10``,
    ``mae_RBP@10``, ``best_bias``, ``bias``, ``best_rbp_bias``, ``rbp_bias``, ``statement``.
    """
    rows = []
    for track, everything in errors.groupby("track", sort=False):
        e = plain(everything)
        b = bias[(bias["track"] == track) & (bias["estimator"] == "reduced")]
        b = b[b["measure"] == "P@10"]
        p10, mae_p10 = _best(e[e["measure"] == "P@10"])
        r10, mae_r10 = _best(e[e["measure"] == "RBP(p=0.8)@10"])
        bb, bias_bb = _best(b)
        rb, bias_rb = _best(b[[family(s) in RBP_BASED for s in b["strategy"]]])
        holds = family(p10) in RBP_BASED and family(r10) in RBP_BASED
        budgets = sorted(e["budget"].unique())
        deep = b.groupby("strategy")["depth"].max() if "depth" in b.columns else None
        reach = f" (it reaches rank {int(deep[bb])})" if deep is not None and bb else ""
        statement = (
            f"On {track} the ICTIR 2016 finding (RBP-based selection gives the least biased "
            f"pools for precision-oriented measures) {'HOLDS' if holds else 'DOES NOT HOLD'}: "
            f"against the full judgments, averaged over budgets {budgets[0]}-{budgets[-1]}, the "
            f"lowest MAE of the non-sampling strategies is {p10}'s at P@10 ({mae_p10:.4f}) and "
            f"{r10}'s at RBP(p=0.8)@10 ({mae_r10:.4f}). The lowest leave-one-organization-out "
            f"bias of the reduced pool at P@10 is {bb}'s ({bias_bb:.4f}){reach}; the best "
            f"RBP-based strategy there is {rb} ({bias_rb:.4f}). That measure counts only the "
            "documents unique to an organisation within the pool's contribution depth, so a "
            "strategy that judges documents deep in the rankings looks unbiased by construction."
        )
        samp = best_sampler(everything)
        if samp:
            ap, mae_ap = _best(e[e["measure"] == "AP"])
            statement += (
                f" Scored with their own estimators, the best sampling strategy at AP is "
                f"{samp['sampler']} with {samp['estimator']} (MAE {samp['mae']:.4f}, against "
                f"{samp['plain_mae']:.4f} for the plain AP on the same sampled qrels); the best "
                f"non-sampling strategy at AP is {ap} ({mae_ap:.4f})."
            )
        rows.append(
            {
                "track": track,
                "holds": bool(holds),
                "best_P@10": p10,
                "mae_P@10": mae_p10,
                "best_RBP@10": r10,
                "mae_RBP@10": mae_r10,
                "best_bias": bb,
                "bias": bias_bb,
                "best_rbp_bias": rb,
                "rbp_bias": bias_rb,
                "best_sampler_AP": samp.get("sampler", ""),
                "sampler_estimator_AP": samp.get("estimator", ""),
                "sampler_mae_AP": samp.get("mae", np.nan),
                "sampler_plain_mae_AP": samp.get("plain_mae", np.nan),
                "statement": statement,
            }
        )
    return pd.DataFrame(rows)


def run(
    root=None,
    out="out/pooling_strategies",
    jobs: int | None = None,
    dask=None,
    progress=None,
    **params,
) -> dict[str, pd.DataFrame]:
    """Run the comparison on every track under ``root`` (default ``../shared/data/trec``), write
    Parquet, Markdown and the figure to ``out`` (None: nothing) and return the frames.

    ``params``: ``strategies``, ``budgets``, ``measures``, ``cutoffs``, ``estimators``,
    ``topics`` (the first N topics only; None: all), ``lenient``, ``synthetic``, ``seed``.
    """
    if root is None and not params.get("synthetic"):
        root = DEFAULT_ROOT

    def per_track(t: _common.Track, p: dict, jobs: int) -> dict:
        return run_track(t, p, jobs=jobs, dask=dask, progress=progress)

    def write(result, out_dir):
        plot(result, out_dir)
        (Path(out_dir) / "pooling_strategies.md").write_text(markdown(result))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", measures.CoverageWarning)
        return _common.run_tracks(
            "pooling_strategies",
            root,
            out,
            DEFAULTS,
            params,
            per_track,
            jobs=jobs,
            plot=write,
            quiet=True,
        )


def _colours(specs) -> dict:
    """One fixed colour per strategy (the order of :data:`STRATEGIES`, then the rest)."""
    import matplotlib

    known = list(STRATEGIES) + sorted(set(specs) - set(STRATEGIES))
    cmap = matplotlib.colormaps["tab20"]
    return {s: cmap(i % 20) for i, s in enumerate(known)}


def plot(result: dict[str, pd.DataFrame], out: Path) -> None:
    """``error_vs_budget[_track].png`` and ``.svg``: (a) and (b) at P@10 against the budget."""
    plt = _common.pyplot()
    errors, bias = plain(result["errors"]), result["bias"]
    colours = _colours(errors["strategy"].unique())
    for track, e in errors.groupby("track", sort=False):
        b = bias[(bias["track"] == track) & (bias["estimator"] == "reduced")]
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharex=True)
        panels = [
            (e[e["measure"] == "P@10"], "MAE of P@10: simulated vs full qrels"),
            (b[b["measure"] == "P@10"], "MAE of P@10, leave-one-org-out (reduced pool)"),
        ]
        for ax, (df, ylabel) in zip(axes, panels, strict=True):
            for spec, g in df.groupby("strategy", sort=False):
                g = g.sort_values("budget")
                rbp = family(spec) in RBP_BASED
                ax.plot(
                    g["budget"],
                    g["mae"],
                    marker="o" if rbp else ".",
                    lw=2.2 if rbp else 1.2,
                    color=colours[spec],
                    label=spec,
                )
            ax.set_xlabel("budget (judgments per topic)")
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
        axes[0].set_title("(a) error against the full judgments")
        axes[1].set_title("(b) pool bias")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
        fig.suptitle(f"Fixed-cost pooling strategies on {track}")
        fig.tight_layout()
        suffix = _common.plot_suffix(errors, track)
        for ext in ("png", "svg"):
            fig.savefig(out / f"error_vs_budget{suffix}.{ext}", dpi=120, bbox_inches="tight")
        plt.close(fig)


def _table(df: pd.DataFrame, fmt: str = "{:.4f}") -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join([df.index.name or "", *cols]) + " |"]
    lines.append("|" + "---|" * (len(cols) + 1))
    for idx, row in df.iterrows():
        cells = [fmt.format(v) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join([str(idx), *cells]) + " |")
    return "\n".join(lines)


def markdown(result: dict[str, pd.DataFrame]) -> str:
    """The tables: (a) MAE of P@10, (b) bias at P@10, corrections and timings at the largest
    budget, and the verdict, per track."""
    parts = ["# Fixed-cost pooling strategies\n"]
    for track, everything in result["errors"].groupby("track", sort=False):
        e = plain(everything)
        b = result["bias"][result["bias"]["track"] == track]
        t = result["timings"][result["timings"]["track"] == track]
        v = result["verdict"][result["verdict"]["track"] == track].iloc[0]
        top = int(e["budget"].max())
        parts.append(f"## {track}\n\n**Verdict.** {v['statement']}\n")
        a = e[e["measure"] == "P@10"].pivot(index="strategy", columns="budget", values="mae")
        parts.append("(a) MAE of P@10, simulated against full qrels, by budget:\n")
        parts.append(_table(a) + "\n")
        at = e[e["budget"] == top].pivot(index="strategy", columns="measure", values="mae")
        parts.append(f"(a) MAE per measure at budget {top}:\n")
        parts.append(_table(at) + "\n")
        if "scored_by" in everything.columns:
            samp = everything[[family(s) in SAMPLERS for s in everything["strategy"]]]
            if len(samp):
                samp = samp.assign(row=samp["strategy"] + " / " + samp["scored_by"])
                for m in ("AP", "P@10"):
                    sm = samp[samp["measure"] == m]
                    if len(sm):
                        parts.append(f"(a) sampling strategies at {m}, plain and estimated, MAE:\n")
                        t_ = sm.pivot(index="row", columns="budget", values="mae")
                        parts.append(_table(t_) + "\n")
        red = b[(b["estimator"] == "reduced") & (b["measure"] == "P@10")]
        parts.append("(b) leave-one-organization-out MAE of the reduced pool at P@10 (bias):\n")
        parts.append(_table(red.pivot(index="strategy", columns="budget", values="mae")) + "\n")
        c = b[(b["budget"] == top) & (b["measure"] == "P@10")]
        parts.append(f"(b) MAE of each estimator at P@10, budget {top}:\n")
        parts.append(_table(c.pivot(index="strategy", columns="estimator", values="mae")) + "\n")
        tt = t[t["budget"] == top].set_index("strategy")[["seconds"]]
        parts.append(f"Time to simulate each strategy at budget {top} (s):\n")
        parts.append(_table(tt, "{:.3f}") + "\n")
    return "\n".join(parts)


def report(result: dict[str, pd.DataFrame]) -> str:
    """The terminal report: timings at the largest budget and the verdicts."""
    lines = []
    for track, t in result["timings"].groupby("track", sort=False):
        top = int(t["budget"].max())
        lines.append(f"\n=== {track}: time to simulate each strategy at budget {top} ===")
        for row in t[t["budget"] == top].itertuples():
            lines.append(f"  {row.strategy:14s} {row.seconds:7.3f} s  ({row.cost} judgments)")
    lines.append("")
    lines += list(result["verdict"]["statement"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python benchmarks/pooling_strategies.py [ROOT] [-o DIR] ...``."""
    ap = _common.parser(
        __doc__, "out/pooling_strategies", DEFAULTS["seed"], "seed of the strategies"
    )
    ap.add_argument("--strategies", nargs="+", default=list(STRATEGIES), metavar="SPEC")
    ap.add_argument("--budgets", type=int, nargs="+", default=list(DEFAULTS["budgets"]))
    ap.add_argument("--topics", type=int, help="only the first N topics of each track")
    a = ap.parse_args(argv)
    for spec in a.strategies:  # refuse bad arguments before any work
        strategies.parse(spec)
    if any(b < 1 for b in a.budgets):
        ap.error("budgets must be positive")
    t0 = time.perf_counter()
    result = run(
        a.root,
        a.out,
        **_common.common_params(a),
        strategies=tuple(a.strategies),
        budgets=tuple(a.budgets),
        topics=a.topics,
    )
    return _common.finish(result, report, a.out, t0)


if __name__ == "__main__":
    sys.exit(main())
