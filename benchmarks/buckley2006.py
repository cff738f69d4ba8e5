"""Buckley, Dimmick, Soboroff & Voorhees (2006), "Bias and the limits of pooling".

Reproduces the per-group *unique relevant documents* test of §1 on any collection in the TREC
layout: for every organisation t, U_t^rel are the relevant documents that only t's pooled runs
placed in their top d; each pooled run of t is scored with and without U_t^rel
(``pbtools.pooling.unique_contributions``), and the percentage drop 100·(full − without)/full is
reported per organisation (mean and max over its runs) and over all pooled runs (Buckley et al.:
mean 3.2 %, max 23.1 % of MAP on AQUAINT 2005). Bpref is reported beside MAP, since Buckley et
al. note that bias moves the two in opposite directions.

To show the pool-depth side of their argument the test is repeated on shallower pools
(``--depths``, default: the collection's depth d, 50, 20 and 10; the relevance data of depth pd
are the judgments of documents some pooled run ranks in its top pd, ``pooling.shallow``). Each
depth is one task of the grid.

**titlestat is not computed**: it needs the topic titles (to count title words in the relevant
documents) and the document texts, neither of which is in the TREC layout pbtools reads
(qrels, runs, desc.xml).

Usage::

    python benchmarks/buckley2006.py ../shared/data/trec/TREC-2/Adhoc
    python benchmarks/buckley2006.py --synthetic

Outputs in ``-o DIR`` (default ``out/buckley2006/``):

``orgs.parquet``
    ``track``, ``depth``, ``org``, ``runs`` (pooled runs), ``unique``, ``unique_rel`` (|U_t|,
    |U_t^rel| per topic), ``measure``, ``mean_diff``, ``max_diff`` (% drop without U_t^rel).
``summary.parquet``
    ``track``, ``depth``, ``measure``, ``n_runs`` (pooled runs with a non-zero full score),
    ``mean_change_pct`` (mean over those runs), ``max_change_pct``, ``max_org`` and ``max_run``
    (the run with the largest change and its organisation), ``unique_rel_share`` (share of
    the relevant documents that are unique to one organisation).

Plots: ``unique_rel.png`` (|U_t^rel| per organisation and its MAP drop), ``depth.png``
(mean / max % change against pool depth).
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

from pbtools import grid, pooling  # noqa: E402

DEFAULTS = dict(
    depths=(None, 50, 20, 10), measures=("AP", "Bpref"), lenient=True, synthetic=False, seed=2006
)


def depth_task(depth: int, *, runs, qrels, orgs, pooled, full_depth, measures) -> dict:
    """One grid task: the unique-relevant test on the depth-``depth`` pool of the pooled runs."""
    q = qrels
    if depth < full_depth:
        q = pooling.shallow(runs, qrels, [depth], pooled=pooled).drop(columns="depth")
    args = (runs, q, orgs, depth, list(measures))
    per_org = pooling.unique_contributions(*args, unit="org", pooled=pooled)
    per_org = per_org.assign(
        depth=depth, org=per_org["org"].astype("str"), measure=per_org["measure"].astype("str")
    )
    per_run = pooling.unique_contributions(*args, unit="org", pooled=pooled, per_run=True)
    per_run = per_run.astype({"name": "str", "org": "str", "measure": "str"}).assign(depth=depth)
    n_rel = int((q["label"] > 0).sum())
    n_topics = q["qid"].nunique()
    return {"orgs": per_org, "runs": per_run, "n_rel_per_topic": n_rel / max(n_topics, 1)}


def _summary(
    per_org: pd.DataFrame,
    per_run: pd.DataFrame,
    rel_per_topic: dict,
) -> pd.DataFrame:
    """Mean and max of the % change over the pooled runs (``per_run``; runs with a zero full
    score have no change and are left out), the run with the largest change and its org."""
    rows = []
    for (depth, meas), g in per_run.groupby(["depth", "measure"], sort=True):
        ok = g.dropna(subset=["diff_pct"])
        top = ok.loc[ok["diff_pct"].idxmax()] if len(ok) else None
        o = per_org[per_org["depth"] == depth]
        rows.append(
            {
                "depth": depth,
                "measure": meas,
                "n_runs": len(ok),
                "mean_change_pct": float(ok["diff_pct"].mean()) if len(ok) else np.nan,
                "max_change_pct": float(top["diff_pct"]) if top is not None else np.nan,
                "max_org": str(top["org"]) if top is not None else "",
                "max_run": str(top["name"]) if top is not None else "",
                "unique_rel_share": float(
                    o.drop_duplicates("org")["unique_rel"].sum() / rel_per_topic[depth]
                ),
            }
        )
    return pd.DataFrame(rows)


def run_track(
    track,
    runs,
    qrels,
    orgs,
    pooled,
    depth,
    *,
    jobs=1,
    dask=None,
    depths=(None, 50, 20, 10),
    measures=("AP", "Bpref"),
    progress=None,
) -> dict:
    """The test at every depth of ``depths`` (None = the pool depth d) on one collection."""
    ds = sorted({depth if d is None else min(int(d), depth) for d in depths}, reverse=True)
    shared = dict(
        runs=runs, qrels=qrels, orgs=orgs, pooled=pooled, full_depth=depth, measures=tuple(measures)
    )
    res = grid.run_grid(
        depth_task,
        [{"depth": d} for d in ds],
        jobs=jobs,
        dask=dask,
        shared=shared,
        progress=progress,
        desc=f"buckley2006 {track}",
    )
    per_org = pd.concat([r["orgs"] for r in res], ignore_index=True)
    per_run = pd.concat([r["runs"] for r in res], ignore_index=True)
    summary = _summary(
        per_org, per_run, {d: r["n_rel_per_topic"] for d, r in zip(ds, res, strict=True)}
    )
    per_org.insert(0, "track", track)
    summary.insert(0, "track", track)
    cols = [
        "track",
        "depth",
        "org",
        "runs",
        "unique",
        "unique_rel",
        "measure",
        "mean_diff",
        "max_diff",
    ]
    return {"orgs": per_org[cols], "summary": summary}


def run(
    root=None, out="out/buckley2006", jobs: int | None = None, dask=None, progress=None, **params
) -> dict[str, pd.DataFrame]:
    """Run the test on every track under ``root`` (or ``synthetic=True``), write Parquet and
    plots to ``out`` (None: write nothing) and return ``{"orgs": …, "summary": …}``.

    ``params``: ``depths`` (None = the pool depth), ``measures``, ``lenient``, ``synthetic``,
    ``seed`` (synthetic collection only).
    """

    def per_track(t: _common.Track, p: dict, jobs: int) -> dict:
        return run_track(
            t.name,
            t.runs,
            t.qrels,
            t.orgs,
            t.pooled,
            t.depth,
            jobs=jobs,
            dask=dask,
            depths=p["depths"],
            measures=p["measures"],
            progress=progress,
        )

    return _common.run_tracks(
        "buckley2006", root, out, DEFAULTS, params, per_track, jobs=jobs, plot=plot, quiet=True
    )


def plot(result: dict[str, pd.DataFrame], out: Path) -> None:
    """``unique_rel.png`` and ``depth.png`` (matplotlib, Agg backend)."""
    plt = _common.pyplot()
    orgs, summary = result["orgs"], result["summary"]
    for track, o in orgs.groupby("track", sort=False):
        suffix = _common.plot_suffix(orgs, track)
        d = o["depth"].max()
        g = o[(o["depth"] == d) & (o["measure"] == "AP")].sort_values("unique_rel")
        fig, ax = plt.subplots(figsize=(8, max(3, 0.25 * len(g))))
        y = np.arange(len(g))
        ax.barh(y - 0.2, g["unique_rel"], 0.4, label="unique relevant / topic")
        ax.barh(y + 0.2, g["max_diff"], 0.4, label="max MAP drop (%)")
        ax.set_yticks(y, [s[:30] for s in g["org"]], fontsize=7)
        ax.legend(fontsize=8)
        ax.set_title(f"Buckley et al. 2006: unique relevant documents, depth {d} ({track})")
        fig.tight_layout()
        fig.savefig(out / f"unique_rel{suffix}.png", dpi=120)
        plt.close(fig)
        s = summary[summary["track"] == track]
        fig, ax = plt.subplots(figsize=(6, 4))
        for meas, g2 in s.groupby("measure", sort=False):
            ax.plot(g2["depth"], g2["mean_change_pct"], marker="o", label=f"{meas} mean")
            ax.plot(g2["depth"], g2["max_change_pct"], marker="s", ls="--", label=f"{meas} max")
        ax.set_xscale("log")
        ax.set_xlabel("pool depth")
        ax.set_ylabel("% drop without the group's unique relevant documents")
        ax.axhline(0, color="grey", lw=0.8)
        ax.legend(fontsize=8)
        ax.set_title(f"Unique-relevant test vs pool depth ({track})")
        fig.tight_layout()
        fig.savefig(out / f"depth{suffix}.png", dpi=120)
        plt.close(fig)


def report(result: dict[str, pd.DataFrame]) -> str:
    """Readable terminal tables."""
    lines = []
    for track, o in result["orgs"].groupby("track", sort=False):
        d = o["depth"].max()
        lines.append(f"\n=== Buckley et al. 2006 on {track} ===")
        lines.append(
            f"\nper organisation at the pool depth {d} (% drop without its unique "
            "relevant documents)"
        )
        w = o[o["depth"] == d].pivot_table(
            index=["org", "runs", "unique", "unique_rel"],
            columns="measure",
            values=["mean_diff", "max_diff"],
        )
        w.columns = [f"{m} {s}" for s, m in w.columns]
        w = w.reset_index().sort_values("unique_rel", ascending=False)
        w["org"] = w["org"].str.slice(0, 34)
        lines.append(w.round(2).to_string(index=False))
        s = result["summary"][result["summary"]["track"] == track]
        lines.append("\nover all pooled runs, by pool depth")
        lines.append(s.drop(columns="track").round(3).to_string(index=False))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python benchmarks/buckley2006.py ROOT [-o DIR] [--depths …]``."""
    ap = _common.parser(
        __doc__, "out/buckley2006", DEFAULTS["seed"], "seed of the synthetic collection"
    )
    ap.add_argument(
        "--depths",
        type=int,
        nargs="+",
        default=None,
        help="pool depths (default: the collection's depth d, 50, 20, 10)",
    )
    ap.add_argument("--measures", nargs="+", default=list(DEFAULTS["measures"]))
    a = _common.parse_args(ap, argv)
    t0 = time.perf_counter()
    depths = DEFAULTS["depths"] if a.depths is None else tuple(a.depths)
    result = run(
        a.root, a.out, **_common.common_params(a), depths=depths, measures=tuple(a.measures)
    )
    return _common.finish(result, report, a.out, t0)


if __name__ == "__main__":
    sys.exit(main())
