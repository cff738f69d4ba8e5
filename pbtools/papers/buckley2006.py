"""Buckley, Dimmick, Soboroff & Voorhees (2006), "Bias and the limits of pooling".

Reproduces the per-group *unique relevant documents* test of §1 on any collection in the TREC
layout and checks the paper's claims (``claims.parquet`` / ``claims.md``):

* **The unique-relevant test** (§1, after Zobel 1998): for every organisation t, U_t^rel are the
  relevant documents that only t's pooled runs placed in their top d; each pooled run of t is
  scored with and without U_t^rel (``pbtools.pooling.unique_contributions``), and the change
  100·(without − full)/full is reported per organisation and over all pooled runs (Buckley et
  al.: mean 3.2 %, max 23.1 % of MAP on AQUAINT 2005).
* **MAP and bpref move in opposite directions** (§2, "use of different evaluation measures"): a
  run whose documents the judgments miss has its MAP underestimated and its bpref
  overestimated. Tested by removing the group's whole unique contribution U_t (every document
  only t pooled becomes unjudged, J − U_t, as Sakai's leave-one-team-out;
  ``pbtools.pooling.leave_one_out``), beside the unique-relevant-only removal, which can only
  lower bpref and so cannot show the over-estimate. MAP is the same under both (unjudged
  documents count as non-relevant).
* **Too-shallow pools** (§1): the paper's claim (D0) is that AQUAINT's pools were too shallow
  *for its document set size*, shown with titlestat; it cannot be tested on the TREC layout.
  As an **extension** (D1, marked so), the test is repeated on shallower pools
  (``--depths``, default: the collection's depth d, 50, 20 and 10; the relevance data of depth
  pd are the judgments of documents some pooled run ranks in its top pd, ``pooling.shallow``).
  This extends the paper, which argues the point without an experiment.

**titlestat is not computed**: it needs the topic titles (to count title words in the relevant
documents) and the document texts, neither of which is in the TREC layout pbtools reads (qrels,
runs, desc.xml); the claims resting on it are reported n.a. by the script.

Usage::

    pbtools reproduce buckley2006 ../shared/data/trec/TREC-2/Adhoc -o out/buckley2006
    pbtools reproduce buckley2006 --synthetic

Outputs in ``-o DIR`` (default ``out/buckley2006/``):

``orgs.parquet``
    ``track``, ``depth``, ``removed`` (``unique_rel``: U_t^rel; ``unique``: U_t), ``org``,
    ``runs`` (pooled runs), ``unique``, ``unique_rel`` (|U_t|, |U_t^rel| per topic),
    ``measure``, ``mean_change_pct``, ``max_drop_pct`` (over the org's runs).
``runs.parquet``
    ``track``, ``depth``, ``removed``, ``name``, ``org``, ``measure``, ``full``, ``without``,
    ``change_pct`` (100·(without − full)/full; NaN when full is 0).
``summary.parquet``
    ``track``, ``depth``, ``removed``, ``measure``, ``n_runs`` (pooled runs with a non-zero full
    score), ``mean_change_pct``, ``mean_abs_change_pct``, ``max_abs_change_pct``, ``max_org``,
    ``max_run`` (the run with the largest change and its organisation), ``n_up``, ``n_down``
    (runs whose score rises / falls), ``unique_rel_share`` (share of the relevant documents that
    are unique to one organisation).
``claims.parquet``, ``claims.md``
    the paper's claims (:data:`CLAIMS`, declared from the paper) checked on each track.
``reading.parquet``
    how each track was read: run identity (``--run-id``), repairs by kind.

Figures (PNG, PDF, SVG): ``unique_rel`` (|U_t^rel| per organisation and the change of its runs'
MAP), ``depth`` (mean and maximum change against pool depth, MAP and bpref, both removals).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pbtools import grid, measures, pooling
from pbtools.papers import common as _common
from pbtools.papers.buckley2006_claims import (  # noqa: F401  (public here as before)
    CLAIMS,
    TITLESTAT,
    claims_table,
)

TITLE = 'Buckley, Dimmick, Soboroff & Voorhees (2006), "Bias and the limits of pooling"'
#: what each parameter of :data:`DEFAULTS` means (``pbtools reproduce buckley2006 --help``)
OPTIONS = {
    "depths": "pool depths (None: the original pool) at which unique contributions are removed",
    "measures": "measures whose change is reported (paper: AP and bpref)",
    "synthetic": "run on a pbtools.synth collection with complete judgments",
    "seed": "seed of the synthetic collection",
}
DEFAULTS = dict(
    depths=(None, 50, 20, 10), measures=("AP", "Bpref"), lenient=True, synthetic=False, seed=2006
)
REMOVALS = ("unique_rel", "unique")
#: one colour per measure and one line style per removal, in every figure
COLOURS = {"AP": "#1f77b4", "Bpref": "#d62728"}
STYLES = {"unique_rel": "-", "unique": "--"}
WHAT = {
    "unique_rel": r"unique relevant ($U_t^{\mathrm{rel}}$)",
    "unique": r"whole unique contribution ($U_t$)",
}


def depth_task(depth: int, *, runs, qrels, orgs, pooled, full_depth, measures_) -> dict:
    """One grid task: both removals on the depth-``depth`` pool of the pooled runs."""
    q = qrels
    if depth < full_depth:
        q = pooling.shallow(runs, qrels, [depth], pooled=pooled).drop(columns="depth")
    args = (runs, q, orgs, depth, list(measures_))
    per_org = pooling.unique_contributions(*args, unit="org", pooled=pooled)
    per_run = pooling.unique_contributions(*args, unit="org", pooled=pooled, per_run=True)
    per_run = per_run.astype({"name": "str", "org": "str", "measure": "str"})
    rel = per_run.assign(removed="unique_rel")
    # J − U_t: every document only the run's organisation pooled becomes unjudged
    red = pooling.leave_one_out(runs, q, depth, leave_out="org", orgs=orgs, pooled=pooled)
    own = runs[runs["name"].astype("str").isin(per_run["name"].unique())]
    org_of = per_run.drop_duplicates("name").set_index("name")["org"]
    own = own.assign(left_out=own["name"].astype("str").map(org_of))
    w = measures.evaluate(own, red, list(measures_), keys=["left_out"])
    w = w.astype({"name": "str", "measure": "str"})[["name", "measure", "value"]]
    whole = per_run.drop(columns=["without", "diff_pct"]).merge(
        w.rename(columns={"value": "without"}), on=["name", "measure"]
    )
    whole["removed"] = "unique"
    runs_out = pd.concat([rel.drop(columns="diff_pct"), whole], ignore_index=True)
    f, wo = runs_out["full"].to_numpy(), runs_out["without"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        runs_out["change_pct"] = np.where(f > 0, 100.0 * (wo - f) / f, np.nan)
    base = per_org[["org", "runs", "unique", "unique_rel"]].drop_duplicates("org")
    base = base.astype({"org": "str"})
    n_rel = int((q["label"] > 0).sum())
    return {
        "orgs": base,
        "runs": runs_out.assign(depth=depth),
        "n_rel_per_topic": n_rel / max(q["qid"].nunique(), 1),
    }


def _orgs(base: pd.DataFrame, per_run: pd.DataFrame) -> pd.DataFrame:
    """Per (depth, removal, org, measure): the mean change and the largest drop of its runs."""
    g = per_run.groupby(["depth", "removed", "org", "measure"], sort=True)["change_pct"]
    agg = g.agg(mean_change_pct="mean", max_drop_pct=lambda x: -x.min()).reset_index()
    out = agg.merge(base, on=["depth", "org"], how="left")
    return out[
        [
            "depth",
            "removed",
            "org",
            "runs",
            "unique",
            "unique_rel",
            "measure",
            "mean_change_pct",
            "max_drop_pct",
        ]
    ]


def _summary(per_run: pd.DataFrame, base: pd.DataFrame, rel_per_topic: dict) -> pd.DataFrame:
    """Over the pooled runs (runs with a zero full score have no change and are left out)."""
    rows = []
    for (depth, removed, meas), g in per_run.groupby(["depth", "removed", "measure"], sort=True):
        ok = g.dropna(subset=["change_pct"])
        ch = ok["change_pct"]
        top = ok.loc[ch.abs().idxmax()] if len(ok) else None
        o = base[base["depth"] == depth]
        rows.append(
            {
                "depth": depth,
                "removed": removed,
                "measure": meas,
                "n_runs": len(ok),
                "mean_change_pct": float(ch.mean()) if len(ok) else np.nan,
                "mean_abs_change_pct": float(ch.abs().mean()) if len(ok) else np.nan,
                "max_abs_change_pct": float(ch.abs().max()) if len(ok) else np.nan,
                "max_org": str(top["org"]) if top is not None else "",
                "max_run": str(top["name"]) if top is not None else "",
                "n_up": int((ch > 1e-12).sum()),
                "n_down": int((ch < -1e-12).sum()),
                "unique_rel_share": float(o["unique_rel"].sum() / rel_per_topic[depth]),
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
        runs=runs,
        qrels=qrels,
        orgs=orgs,
        pooled=pooled,
        full_depth=depth,
        measures_=tuple(measures),
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
    base = pd.concat([r["orgs"].assign(depth=d) for d, r in zip(ds, res, strict=True)])
    per_run = pd.concat([r["runs"] for r in res], ignore_index=True)
    rel = {d: r["n_rel_per_topic"] for d, r in zip(ds, res, strict=True)}
    summary = _summary(per_run, base, rel)
    per_org = _orgs(base, per_run)
    for f in (per_org, per_run, summary):
        f.insert(0, "track", track)
    cols = ["track", "depth", "removed", "name", "org", "measure", "full", "without", "change_pct"]
    out = {"orgs": per_org, "runs": per_run[cols], "summary": summary}
    out["claims"] = claims_table(out, track, depth)
    return out


def run(
    root=None, out="out/buckley2006", jobs: int | None = None, dask=None, progress=None, **params
) -> dict[str, pd.DataFrame]:
    """Run the test on every track under ``root`` (or ``synthetic=True``), write Parquet, the
    claims and the figures to ``out`` (None: write nothing) and return the frames by name.

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
        "buckley2006",
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


def figures(result: dict[str, pd.DataFrame], out: Path) -> None:
    """The figures ``unique_rel`` and ``depth`` (PNG, PDF, SVG; Agg backend)."""
    plt = _common.pyplot()
    orgs, summary = result["orgs"], result["summary"]
    for track, o in orgs.groupby("track", sort=False):
        suffix = _common.plot_suffix(orgs, track)
        d = o["depth"].max()
        g = o[(o["depth"] == d) & (o["measure"] == "AP") & (o["removed"] == "unique_rel")]
        g = g.sort_values("unique_rel")
        fig, axes = plt.subplots(1, 2, figsize=(8, max(3, 0.22 * len(g) + 1)), sharey=True)
        y = np.arange(len(g))
        axes[0].barh(y, g["unique_rel"], color="#7f7f7f")
        axes[0].set_xlabel("unique relevant documents\n(per topic)")
        axes[0].set_yticks(y, [s if len(s) <= 34 else s[:33] + "…" for s in g["org"]])
        axes[1].barh(y, -g["mean_change_pct"], color=COLOURS["AP"], label="mean of its runs")
        axes[1].plot(g["max_drop_pct"], y, "k|", ms=8, label="largest drop")
        axes[1].set_xlabel("MAP drop without them (%)")
        _common.legend_outside(axes[1])
        fig.suptitle(
            f"Buckley et al. 2006, §1: each group's unique relevant documents at pool depth "
            f"{d} ({track})"
        )
        _common.save_figure(fig, out, f"unique_rel{suffix}")

        s = summary[summary["track"] == track]
        fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.3), sharex=True)
        for (meas, removed), g2 in s.groupby(["measure", "removed"], sort=False):
            if meas == "AP" and removed == "unique":
                continue  # the same line: unjudged documents count as non-relevant in AP
            g2 = g2.sort_values("depth")
            kw = dict(color=COLOURS.get(meas), ls=STYLES[removed], marker="o", ms=3)
            label = (
                "MAP, either removal"
                if meas == "AP"
                else f"{'MAP' if meas == 'AP' else meas}, {WHAT[removed]}"
            )
            axes[0].plot(g2["depth"], g2["mean_change_pct"], label=label, **kw)
            axes[1].plot(g2["depth"], g2["max_abs_change_pct"], **kw)
        for ax in axes:
            _common.log_ticks(ax, sorted(s["depth"].unique()))
            ax.set_xlabel("pool depth (documents per run)")
            ax.axhline(0, color="grey", lw=0.8)
        axes[0].set_ylabel("mean change over the pooled runs (%)")
        axes[1].set_ylabel("largest change of a run (|%|)")
        fig.legend(
            *axes[0].get_legend_handles_labels(),
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=2,
        )
        fig.suptitle(f"Removing a group's unique documents, by pool depth ({track})")
        fig.tight_layout()
        _common.save_figure(fig, out, f"depth{suffix}")


def report(result: dict[str, pd.DataFrame]) -> str:
    """Readable terminal tables, then the claims."""
    lines = []
    for track, o in result["orgs"].groupby("track", sort=False):
        d = o["depth"].max()
        lines.append(f"\n=== Buckley et al. 2006 on {track} ===")
        lines.append(
            f"\nper organisation at the pool depth {d}: change (%) of its runs' scores without "
            "U_t^rel (unique relevant) / U_t (whole unique contribution)"
        )
        w = o[o["depth"] == d].pivot_table(
            index=["org", "runs", "unique", "unique_rel"],
            columns=["measure", "removed"],
            values="mean_change_pct",
        )
        w.columns = [f"{m} −{'U_t^rel' if r == 'unique_rel' else 'U_t'}" for m, r in w.columns]
        w = w.reset_index().sort_values("unique_rel", ascending=False)
        w["org"] = w["org"].str.slice(0, 34)
        lines.append(w.round(2).to_string(index=False))
        s = result["summary"][result["summary"]["track"] == track]
        lines.append("\nover all pooled runs, by pool depth")
        lines.append(s.drop(columns="track").round(3).to_string(index=False))
        lines.append(
            "\ntitlestat (§1) is not computed: it needs topic titles and document texts, which "
            "the TREC layout (qrels, runs, desc.xml) does not include."
        )
    lines.append(_common.claims.report(result["claims"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m pbtools.papers.buckley2006 ROOT [-o DIR] [--depths …]``."""
    ap = _common.parser(
        __doc__, "out/buckley2006", DEFAULTS["seed"], "seed of the synthetic collection"
    )
    ap.add_argument(
        "--depths",
        type=int,
        nargs="+",
        default=None,
        help="pool depths (default: the collection's depth d, 50, 20, 10; the paper has d only)",
    )
    ap.add_argument(
        "--measures",
        nargs="+",
        default=list(DEFAULTS["measures"]),
        help="measures (AP and Bpref, as the paper)",
    )
    a = _common.parse_args(ap, argv)
    t0 = time.perf_counter()
    depths = DEFAULTS["depths"] if a.depths is None else tuple(a.depths)
    return _common.run_main(ap, a, run, report, t0, depths=depths, measures=tuple(a.measures))


if __name__ == "__main__":
    sys.exit(main())
