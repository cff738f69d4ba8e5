"""Webber & Park (2009), "Score adjustment for correction of pooling bias": Tables 1-3.

The resampling experiment of their Algorithm 3, on any collection in the TREC layout:

for every pool width w (``--widths``, default 2, 4, 10, 20, 40; a width is clipped to the number
of pooled runs − 1) and every repeat i = 1..I (``--repeats``, default 5; the paper used 100):

1. draw w + 1 pooled runs at random; one is the unpooled run r, the other w form S;
2. pool S to depth ``--pool-depth`` (10): Q_S = the original judgments of the documents some run
   of S ranks in its top 10 (``pbtools.pooling.repool``);
3. score r per topic with RBP(p=0.8)@10 (``--rbp-p``, the paper's metric, base value): the true
   score t on the full qrels, the unpooled score u on Q_S with unjudged documents assumed
   irrelevant, and the condensed-list score c on Q_S (unjudged documents removed);
4. **Table 1** (inference from systems, their Algorithm 1): u_r + a with a the mean leave-one-out
   error of the runs of S, each withdrawn run replaced in the pool by r
   (``pbtools.corrections.estimate``, estimator ``webber``, ``replace=True``);
5. **Tables 2 / 3** (inference from common topics, Algorithm 2): for each number n of common
   topics (``--common``, default 5, 10, 20) draw J topic subsets C (``--topic-samples``, default
   200, as the paper), a = mean_C(t − x) with x = u (Table 2) or c (Table 3); *adjusted* =
   mean_T(x) + a, *mixed* = the mean of t on C and x elsewhere, *unadjusted* = mean_T(x).

MAE (``pbtools.stats.mae``) of each estimate against mean_T(t) over the I × J samples.
Step 5 is evaluated for all J topic subsets at once (:func:`common_topic_estimates`, one matrix
product); it equals ``pbtools.corrections.webber_common_topics`` applied to each subset, which loops
over groups in Python and also bootstraps an interval, too slow for 10⁴-10⁶ subsets
(``tests/test_paper_scripts.py`` checks the two agree).

The paper used TREC 2004 Robust (249 topics, 110 runs) and TREC-8; TREC-2 has 50 topics and 36
pooled runs, so only small common-topic sets are possible and width 40 is clipped to 35.

Usage::

    python benchmarks/webber2009.py ../shared/data/trec/TREC-2/Adhoc --repeats 20
    python benchmarks/webber2009.py --synthetic --seed 1

Outputs in ``-o DIR`` (default ``out/webber2009/``):

``samples.parquet``
    one row per (track, width, repeat): ``track``, ``width``, ``repeat``, ``seed``, ``unpooled``
    (run r), ``pooled`` (S joined by ``+``), ``n_topics``, ``true``, ``unadjusted``,
    ``condensed``, ``webber_runs`` (Table 1 estimate), ``judged_share`` (share of r's top 10
    judged in Q_S).
``mae.parquet``
    ``track``, ``table`` (1, 2, 3), ``lists`` (``irrelevant`` | ``condensed``), ``width``,
    ``common_topics`` (0 for Table 1), ``estimator`` (``unadjusted``, ``mixed``, ``adjusted``,
    ``adjusted_runs``), ``mae``, ``n_samples``.

Plots: ``table1.png``, ``table2.png``, ``table3.png`` (MAE against pool width / common topics).
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

from pbtools import corrections, grid, measures, pooling, stats  # noqa: E402

DEFAULTS = dict(
    seed=2009,
    repeats=5,
    widths=(2, 4, 10, 20, 40),
    common=(5, 10, 20),
    topic_samples=200,
    pool_depth=10,
    rbp_p=0.8,
    lenient=True,
    synthetic=False,
)


# --------------------------------------------------------------------------------------------
# one system sample (a grid task)
# --------------------------------------------------------------------------------------------


def _topic_masks(rng: np.random.Generator, n_topics: int, n: int, samples: int) -> np.ndarray:
    """``samples`` × ``n_topics`` boolean masks, each selecting ``n`` distinct topics."""
    pick = np.argsort(rng.random((samples, n_topics)), axis=1)[:, :n]
    mask = np.zeros((samples, n_topics), dtype=bool)
    np.put_along_axis(mask, pick, True, axis=1)
    return mask


def common_topic_estimates(t: np.ndarray, x: np.ndarray, masks: np.ndarray) -> dict:
    """Webber & Park Algorithm 2 over many common-topic sets at once.

    ``t``, ``x``: true and unpooled per-topic scores (aligned); ``masks``: samples × topics,
    True = a common (fully judged) topic. Returns per sample ``adjusted`` = mean(x) + mean_C(t −
    x), ``mixed`` = mean of t on C and x elsewhere, ``unadjusted`` = mean(x).
    """
    n = masks.sum(axis=1)
    m = masks.astype(np.float64)
    a = m @ (t - x) / n
    return {
        "unadjusted": np.full(len(masks), x.mean()),
        "adjusted": x.mean() + a,
        "mixed": (m @ t + (1.0 - m) @ x) / len(t),
    }


def sample_task(
    width: int,
    repeat: int,
    seed: int,
    *,
    runs,
    qrels,
    pooled,
    pool_depth,
    rbp_p,
    common,
    topic_samples,
) -> dict:
    """One (width, repeat) system sample of Algorithm 3; see the module docstring.

    Returns ``sample`` (one row of ``samples.parquet``) and ``errors`` (``width``, ``repeat``,
    ``sample`` (j), ``table``, ``lists``, ``common_topics``, ``estimator``, ``true``,
    ``estimate``): one row per topic sample and estimator.
    """
    rng = np.random.default_rng(seed)
    chosen = [pooled[i] for i in rng.choice(len(pooled), size=width + 1, replace=False)]
    r, S = chosen[0], sorted(chosen[1:])
    names = runs["name"].astype("str")
    run_r = runs[names == r]
    runs_s = runs[names.isin(S)]
    q_s = pooling.repool(runs_s, qrels, pool_depth)
    m_raw = measures.measure_names([f"RBP(p={rbp_p})@{pool_depth}"])[0]
    m_cond = measures.measure_names([f"RBP(p={rbp_p},judged_only=True)@{pool_depth}"])[0]
    m_judged = f"Judged@{pool_depth}"
    both = pd.concat(
        [qrels.assign(condition="full"), q_s.assign(condition="pooled")], ignore_index=True
    )
    pt = measures.evaluate(
        run_r, both, [m_raw, m_cond, m_judged], keys=["condition"], per_topic=True
    )
    wide = pt.assign(key=pt["condition"].astype("str") + "|" + pt["measure"].astype("str"))
    wide = wide.pivot_table(index="qid", columns="key", values="value", observed=True)
    t = wide[f"full|{m_raw}"].to_numpy()
    u = wide[f"pooled|{m_raw}"].to_numpy()
    c = wide[f"pooled|{m_cond}"].to_numpy()
    est = corrections.estimate(
        runs_s, run_r, q_s, depth=pool_depth, measures=[m_raw], estimators=["webber"], replace=True
    )
    w = est.loc[est["estimator"] == "webber", "value"]
    webber = float(w.iloc[0]) if len(w) else np.nan  # NaN: no estimate (counted, not scored)
    sample = {
        "width": width,
        "repeat": repeat,
        "seed": seed,
        "unpooled": r,
        "pooled": pooling.SEP.join(S),
        "n_topics": len(t),
        "true": t.mean(),
        "unadjusted": u.mean(),
        "condensed": c.mean(),
        "webber_runs": webber,
        "judged_share": wide[f"pooled|{m_judged}"].mean(),
    }
    parts = [
        pd.DataFrame(
            {
                "table": 1,
                "lists": "irrelevant",
                "common_topics": 0,
                "estimator": ["unadjusted", "adjusted_runs"],
                "sample": 0,
                "true": t.mean(),
                "estimate": [u.mean(), webber],
            }
        )
    ]
    for n in common:
        n_eff = min(int(n), len(t) - 1)
        masks = _topic_masks(rng, len(t), n_eff, topic_samples)
        for table, lists, x in ((2, "irrelevant", u), (3, "condensed", c)):
            for estimator, values in common_topic_estimates(t, x, masks).items():
                parts.append(
                    pd.DataFrame(
                        {
                            "table": table,
                            "lists": lists,
                            "common_topics": n_eff,
                            "estimator": estimator,
                            "sample": np.arange(topic_samples),
                            "true": t.mean(),
                            "estimate": values,
                        }
                    )
                )
    errors = pd.concat(parts, ignore_index=True).assign(width=width, repeat=repeat)
    return {"sample": sample, "errors": errors}


# --------------------------------------------------------------------------------------------
# the experiment
# --------------------------------------------------------------------------------------------


def run_track(
    track: str,
    runs,
    qrels,
    pooled: list[str],
    *,
    jobs: int = 1,
    dask=None,
    seed: int = 2009,
    repeats: int = 5,
    widths=(2, 4, 10, 20, 40),
    common=(5, 10, 20),
    topic_samples: int = 200,
    pool_depth: int = 10,
    rbp_p: float = 0.8,
    progress=None,
) -> dict:
    """Algorithm 3 on one collection (``pooled``: the runs that may be sampled); returns
    ``samples`` and ``mae`` frames."""
    used = sorted({min(int(w), len(pooled) - 1) for w in widths})
    if used != sorted(int(w) for w in widths):
        print(
            f"{track}: pool widths {list(widths)} clipped to {used} ({len(pooled)} pooled runs)",
            file=sys.stderr,
        )
    params = grid.product(width=used, repeat=range(repeats))
    shared = dict(
        runs=runs,
        qrels=qrels,
        pooled=pooled,
        pool_depth=pool_depth,
        rbp_p=rbp_p,
        common=tuple(common),
        topic_samples=topic_samples,
    )
    res = grid.run_grid(
        sample_task,
        params,
        jobs=jobs,
        dask=dask,
        seed=seed,
        shared=shared,
        progress=progress,
        desc=f"webber2009 {track}",
    )
    samples = pd.DataFrame([r["sample"] for r in res])
    samples.insert(0, "track", track)
    errors = pd.concat([r["errors"] for r in res], ignore_index=True)
    errors["name"] = (
        errors["width"].astype(str)
        + "/"
        + errors["repeat"].astype(str)
        + "/"
        + errors["sample"].astype(str)
    )
    keys = ["table", "lists", "width", "common_topics", "estimator"]
    missing = errors["estimate"].isna()
    if missing.any():
        print(
            f"{track}: {int(missing.sum())} samples without an estimate (left out of the MAE)",
            file=sys.stderr,
        )
    errors = errors[~missing]
    mae = stats.mae(errors[[*keys, "name", "true", "estimate"]], by=keys)
    counts = errors.groupby(keys, sort=False).size().rename("n_samples").reset_index()
    mae = mae.merge(counts, on=keys)
    mae.insert(0, "track", track)
    mae = mae.sort_values(["table", "width", "common_topics", "estimator"]).reset_index(drop=True)
    return {"samples": samples, "mae": mae}


def run(
    root=None, out="out/webber2009", jobs: int | None = None, dask=None, progress=None, **params
) -> dict[str, pd.DataFrame]:
    """Run Algorithm 3 on every track under ``root`` (or ``synthetic=True``), write Parquet and
    plots to ``out`` (None: write nothing) and return ``{"samples": …, "mae": …}``.

    ``params``: ``seed``, ``repeats``, ``widths``, ``common``, ``topic_samples``,
    ``pool_depth``, ``rbp_p``, ``lenient``, ``synthetic`` (defaults in :data:`DEFAULTS`).
    """

    def per_track(t: _common.Track, p: dict, jobs: int) -> dict:
        # synthetic: score against the complete judgments, so the true score is exact
        qrels = t.truth if t.truth is not None else t.qrels
        return run_track(
            t.name,
            t.runs,
            qrels,
            t.pooled,
            jobs=jobs,
            dask=dask,
            seed=p["seed"],
            repeats=p["repeats"],
            widths=p["widths"],
            common=p["common"],
            topic_samples=p["topic_samples"],
            pool_depth=p["pool_depth"],
            rbp_p=p["rbp_p"],
            progress=progress,
        )

    return _common.run_tracks(
        "webber2009",
        root,
        out,
        DEFAULTS,
        params,
        per_track,
        jobs=jobs,
        plot=lambda result, o: plot(result["mae"], o),
        quiet=True,
    )


# --------------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------------


def plot(mae: pd.DataFrame, out: Path) -> None:
    """``table1.png`` (MAE vs pool width), ``table2.png`` / ``table3.png`` (MAE vs common
    topics, one line per width and estimator)."""
    plt = _common.pyplot()
    for track, m in mae.groupby("track", sort=False):
        suffix = _common.plot_suffix(mae, track)
        fig, ax = plt.subplots(figsize=(6, 4))
        t1 = m[m["table"] == 1]
        for est, g in t1.groupby("estimator", sort=False):
            ax.plot(g["width"], g["mae"], marker="o", label=est)
        ax.set_xlabel("pooled systems (pool width)")
        ax.set_ylabel("MAE")
        ax.set_xscale("log")
        ax.set_title(f"Table 1: inference from systems ({track})")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / f"table1{suffix}.png", dpi=120)
        plt.close(fig)
        for table, title in ((2, "unjudged assumed irrelevant"), (3, "condensed lists")):
            t = m[m["table"] == table]
            fig, ax = plt.subplots(figsize=(7, 4.5))
            styles = {"unadjusted": ":", "mixed": "--", "adjusted": "-"}
            widths = sorted(t["width"].unique())
            colors = {w: plt.cm.viridis(i / max(len(widths) - 1, 1)) for i, w in enumerate(widths)}
            for (w, est), g in t.groupby(["width", "estimator"], sort=True):
                ax.plot(
                    g["common_topics"],
                    g["mae"],
                    styles.get(est, "-"),
                    marker=".",
                    color=colors[w],
                    label=f"w={w} {est}",
                )
            ax.set_xlabel("common (fully judged) topics")
            ax.set_ylabel("MAE")
            ax.set_title(f"Table {table}: inference from topics, {title} ({track})")
            ax.legend(fontsize=6, ncol=3)
            fig.tight_layout()
            fig.savefig(out / f"table{table}{suffix}.png", dpi=120)
            plt.close(fig)


def report(result: dict[str, pd.DataFrame]) -> str:
    """Readable terminal tables in the paper's layout."""
    lines = []
    mae = result["mae"]
    for track, m in mae.groupby("track", sort=False):
        lines.append(f"\n=== Webber & Park 2009 on {track} ===")
        t1 = m[m["table"] == 1].pivot_table(index="width", columns="estimator", values="mae")
        lines.append("\nTable 1: MAE, inference from systems (unjudged = irrelevant)")
        lines.append(t1.round(4).to_string())
        for table, title in ((2, "unjudged = irrelevant"), (3, "condensed lists")):
            t = m[m["table"] == table].pivot_table(
                index=["width", "estimator"], columns="common_topics", values="mae"
            )
            lines.append(
                f"\nTable {table}: MAE, inference from common topics ({title}); "
                "columns = common topics"
            )
            lines.append(t.round(4).to_string())
        s = result["samples"]
        s = s[s["track"] == track]
        lines.append("\nmean bias (estimate − true) per width:")
        b = s.assign(
            unadjusted=s["unadjusted"] - s["true"],
            condensed=s["condensed"] - s["true"],
            webber_runs=s["webber_runs"] - s["true"],
        )
        lines.append(
            b.groupby("width")[["unadjusted", "condensed", "webber_runs", "judged_share"]]
            .mean()
            .round(4)
            .to_string()
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python benchmarks/webber2009.py ROOT [-o DIR] [--repeats I] …``."""
    ap = _common.parser(__doc__, "out/webber2009", DEFAULTS["seed"])
    ap.add_argument(
        "--repeats",
        type=int,
        default=DEFAULTS["repeats"],
        help="system samples per pool width (paper: 100)",
    )
    ap.add_argument("--widths", type=int, nargs="+", default=list(DEFAULTS["widths"]))
    ap.add_argument(
        "--common",
        type=int,
        nargs="+",
        default=list(DEFAULTS["common"]),
        help="numbers of common (fully judged) topics",
    )
    ap.add_argument(
        "--topic-samples",
        type=int,
        default=DEFAULTS["topic_samples"],
        help="topic subsets per system sample (paper: 200)",
    )
    ap.add_argument("--pool-depth", type=int, default=DEFAULTS["pool_depth"])
    ap.add_argument("--rbp-p", type=float, default=DEFAULTS["rbp_p"])
    a = _common.parse_args(ap, argv)
    t0 = time.perf_counter()
    result = run(
        a.root,
        a.out,
        **_common.common_params(a),
        repeats=a.repeats,
        widths=tuple(a.widths),
        common=tuple(a.common),
        topic_samples=a.topic_samples,
        pool_depth=a.pool_depth,
        rbp_p=a.rbp_p,
    )
    return _common.finish(result, report, a.out, t0)


if __name__ == "__main__":
    sys.exit(main())
