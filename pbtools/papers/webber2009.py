"""Webber & Park (2009), "Score adjustment for correction of pooling bias": Figure 1, Tables 1-4.

The resampling experiment of their Algorithm 3, on any collection in the TREC layout, and the
paper's claims checked on it (``claims.parquet`` / ``claims.md``):

for every pool width w (``--widths``, default 2, 4, 10, 20, 40; a width is clipped to the number
of pooled runs − 1) and every repeat i = 1..I (``--repeats``, default 100 as the paper):

1. draw w + 1 pooled runs at random; one is the unpooled run r, the other w form S;
2. pool S to depth ``--pool-depth`` (10): Q_S = the original judgments of the documents some run
   of S ranks in its top 10 (``pbtools.pooling.repool``);
3. score r per topic with RBP(p=0.8)@10 (``--rbp-p``, the paper's metric, base value): the true
   score t on the full qrels, the unpooled score u on Q_S with unjudged documents assumed
   irrelevant, and the condensed-list score c on Q_S (unjudged documents removed);
4. **Figure 1**: the bias u − t and c − t of r's mean score (mean and quartiles over the
   repeats) against the pool width;
5. **Table 1** (inference from systems, their Algorithm 1): u_r + a with a the mean leave-one-out
   error of the runs of S, each withdrawn run replaced in the pool by r
   (``pbtools.corrections.estimate``, estimator ``webber``, ``replace=True``);
6. **Tables 2 / 3** (inference from common topics, Algorithm 2): for each number n of common
   topics (``--common``, default 5, 10, 20) draw J topic subsets C (``--topic-samples``, default
   200 as the paper), a = mean_C(t − x) with x = u (Table 2) or c (Table 3); *adjusted* =
   mean_T(x) + a, *mixed* = the mean of t on C and x elsewhere, *unadjusted* = mean_T(x).

Errors of each estimate against mean_T(t) over the I × J samples: MAE (``pbtools.stats.mae``)
and RMSE. Step 6 is evaluated for all J topic subsets at once (:func:`common_topic_estimates`,
one matrix product); it equals ``pbtools.corrections.webber_common_topics`` applied to each
subset (``tests/papers/test_webber2009.py`` checks the two agree), which is too slow for 10⁵
subsets.

Table 1's right half and Table 4 use the TREC-8 manual runs: r is drawn from the manual runs
and S from the other (automatic) pooled runs. ``--manual RUN,...`` (``manual=`` of :func:`run`)
names the manual runs of a track (TREC's desc.xml has no manual/automatic field); the
experiment is then run a second time that way (``part = "manual"`` in the frames) and the claims
T1m and T4 are checked; without it they are n.a. A manual run outside the pool (TREC-2's
``rutfmed``) has no complete judgments: its "true" score counts its unjudged documents as
non-relevant (the report says so). The paper used TREC 2004 Robust (249 topics, 110 runs);
TREC-2 has 50 topics and 35 pooled runs, so only small common-topic sets are possible and width
40 is clipped to 34.

The claims are declared in :mod:`pbtools.papers.webber2009_claims` (:data:`CLAIMS`), with the
reading of the paper's wording each criterion makes.

Usage::

    python -m pbtools.papers.webber2009 ../shared/data/trec/TREC-2/Adhoc --manual rutfmed
    python -m pbtools.papers.webber2009 --synthetic --seed 1

Outputs in ``-o DIR`` (default ``out/webber2009/``):

``samples.parquet``
    one row per (track, part, width, repeat): ``track``, ``part`` (``all``: r drawn from every
    pooled run; ``manual``: r a manual run), ``width``, ``repeat``, ``seed``, ``unpooled``
    (run r), ``pooled`` (S joined by ``+``), ``n_topics``, ``true``, ``unadjusted``,
    ``condensed``, ``webber_runs`` (Table 1 estimate), ``judged_share`` (share of r's top 10
    judged in Q_S), ``var_true``, ``mse_adjusted``, ``mse_adjusted_condensed`` (σ²_t and σ²_a
    of their Eqs. 3 and 5, per topic, with unjudged = irrelevant and condensed lists).
``errors.parquet``
    ``track``, ``part``, ``table`` (1, 2, 3), ``lists`` (``irrelevant`` | ``condensed``), ``width``,
    ``common_topics`` (0 for Table 1), ``estimator`` (``unadjusted``, ``mixed``, ``adjusted``,
    ``adjusted_runs``), ``mae``, ``rmse``, ``bias`` (mean estimate − true), ``n_samples``.
``bias.parquet`` (Figure 1)
    ``track``, ``lists``, ``width``, ``mean``, ``q1``, ``median``, ``q3``, ``n_samples``.
``claims.parquet``, ``claims.md``
    the paper's claims checked on each track (:mod:`claims`).

Figures (PNG, PDF, SVG; one colour per estimator in all of them): ``figure1`` (bias with
quartiles against pool width), ``table1`` (MAE and RMSE against pool width), ``table2`` and
``table3`` (MAE and RMSE against the number of common topics, one panel per width).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from pbtools import grid, measures, stats
from pbtools.errors import InputError
from pbtools.frames import unify
from pbtools.papers import common as _common
from pbtools.papers.webber2009_claims import (  # noqa: F401  (CLAIMS: the declared catalogue)
    CLAIMS,
    NO_MANUAL,
    claims_table,
)
from pbtools.papers.webber2009_report import (  # noqa: F401  (public here as before)
    STYLE,
    figures,
    report,
)
from pbtools.papers.webber2009_sample import (  # noqa: F401  (public here as before)
    common_topic_estimates,
    sample_measures,
    sample_task,
    topic_masks,
)
from pbtools.pooling.who_pooled import top_rows

TITLE = 'Webber & Park (2009), "Score adjustment for correction of pooling bias"'
#: what each parameter of :data:`DEFAULTS` means (``pbtools reproduce webber2009 --help``)
OPTIONS = {
    "seed": "seed of the random choices (runs r and S, topic samples)",
    "repeats": "samples of (r, S) per width (paper: 100)",
    "widths": "numbers of pooled runs |S| in the adjustment (Algorithm 1)",
    "common": "numbers of common topics (Algorithm 2)",
    "topic_samples": "topic samples per number of common topics",
    "pool_depth": "depth of the pools built from the runs (paper: 10)",
    "rbp_p": "persistence of RBP",
    "manual": "names of the track's manual runs (Table 1 right, Table 4), e.g. rutfmed",
    "synthetic": "run on a pbtools.synth collection with complete judgments",
}
DEFAULTS = dict(
    seed=2009,
    repeats=100,
    widths=(2, 4, 10, 20, 40),
    common=(5, 10, 20),
    topic_samples=200,
    pool_depth=10,
    rbp_p=0.8,
    manual=(),
    lenient=True,
    synthetic=False,
)


# --------------------------------------------------------------------------------------------
# the experiment
# --------------------------------------------------------------------------------------------


def error_table(errors: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """MAE (``pbtools.stats.mae``), RMSE and bias (mean estimate − true) per ``keys``, over
    the samples (``name``) of ``errors`` (``true``, ``estimate``)."""
    mae = stats.mae(errors[[*keys, "name", "true", "estimate"]], by=keys)
    d = errors.assign(sq=(errors["estimate"] - errors["true"]) ** 2)
    d["signed"] = errors["estimate"] - errors["true"]
    g = d.groupby(keys, sort=False)
    extra = pd.DataFrame(
        {"rmse": np.sqrt(g["sq"].mean()), "bias": g["signed"].mean(), "n_samples": g.size()}
    ).reset_index()
    return mae.merge(extra, on=keys)


def bias_table(samples: pd.DataFrame) -> pd.DataFrame:
    """Figure 1: per width, the mean and quartiles over the repeats of r's mean-score bias
    (estimate − true) with unjudged = irrelevant and with condensed lists."""
    parts = []
    for lists, col in (("irrelevant", "unadjusted"), ("condensed", "condensed")):
        b = (samples[col] - samples["true"]).groupby(samples["width"])
        q = b.quantile([0.25, 0.5, 0.75]).unstack()
        parts.append(
            pd.DataFrame(
                {
                    "lists": lists,
                    "width": q.index,
                    "mean": b.mean().to_numpy(),
                    "q1": q[0.25].to_numpy(),
                    "median": q[0.5].to_numpy(),
                    "q3": q[0.75].to_numpy(),
                    "n_samples": b.size().to_numpy(),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def run_track(
    track: str,
    runs,
    qrels,
    pooled: list[str],
    *,
    jobs: int = 1,
    dask=None,
    seed: int = 2009,
    repeats: int = 100,
    widths=(2, 4, 10, 20, 40),
    common=(5, 10, 20),
    topic_samples: int = 200,
    pool_depth: int = 10,
    rbp_p: float = 0.8,
    manual=(),
    progress=None,
    notes: list[str] | None = None,
) -> dict:
    """Algorithm 3 on one collection (``pooled``: the runs that may be sampled); returns the
    ``samples``, ``errors``, ``bias`` and ``claims`` frames. ``notes`` collects what the
    script had to change (clipped widths) for the report.

    ``manual``: the manual runs (names; pooled or not). When given, the experiment is run a
    second time (``part`` = ``"manual"`` in the frames; ``"all"`` for the first) with r drawn
    from the manual runs and S from the pooled runs that are not manual, as the paper's
    Table 1 (right) and Table 4 do with TREC-8's manual runs.
    """
    notes = [] if notes is None else notes
    manual = sorted(dict.fromkeys(map(str, manual)))
    known = set(runs["name"].astype(str).unique())
    unknown = [m for m in manual if m not in known]
    if unknown:
        raise InputError(
            f"--manual: no run named {', '.join(unknown)} in {track} "
            f"(runs: {', '.join(sorted(known)[:8])}, …)"
        )
    auto = [p for p in pooled if p not in set(manual)]
    names = sorted(set(pooled) | set(manual))
    pooled_runs = runs[runs["name"].isin(names).to_numpy()].reset_index(drop=True)
    # one id dictionary for the runs and the qrels: every join of a sample is an integer join
    qrels = qrels.copy()
    for col in ("qid", "docno"):
        pooled_runs[col], qrels[col] = unify(pooled_runs[col], qrels[col])
    m_raw = sample_measures(pool_depth, rbp_p)[0]
    shared = dict(
        runs=pooled_runs,
        top=top_rows(pooled_runs, pool_depth).reset_index(drop=True),
        true=measures.evaluate(pooled_runs, qrels, [m_raw], per_topic=True),
        qrels=qrels,
        pooled=pooled,
        pool_depth=pool_depth,
        rbp_p=rbp_p,
        common=tuple(common),
        topic_samples=topic_samples,
    )
    parts = [("all", (), len(pooled) - 1)]
    if manual and len(auto) >= 1:
        parts.append(("manual", tuple(manual), len(auto)))
    elif manual:
        notes.append("manual runs given but no pooled automatic run to pool: no manual part")
    samples, errs = [], []
    for k, (part, man, limit) in enumerate(parts):
        used = sorted({min(int(w), limit) for w in widths})
        if used != sorted(int(w) for w in widths):
            notes.append(f"{part}: pool widths {list(widths)} clipped to {used} ({limit} runs)")
        res = grid.run_grid(
            sample_task,
            grid.product(width=used, repeat=range(repeats)),
            jobs=jobs,
            dask=dask,
            seed=seed + k,
            shared={**shared, "manual": man},
            progress=progress,
            desc=f"webber2009 {track}" + (f" ({part} runs unpooled)" if man else ""),
        )
        samples.append(pd.DataFrame([r["sample"] for r in res]).assign(part=part))
        errs.append(pd.concat([r["errors"] for r in res], ignore_index=True).assign(part=part))
    samples = pd.concat(samples, ignore_index=True)
    samples.insert(0, "track", track)
    errors = pd.concat(errs, ignore_index=True)
    errors["name"] = (
        errors["width"].astype(str)
        + "/"
        + errors["repeat"].astype(str)
        + "/"
        + errors["sample"].astype(str)
    )
    keys = ["part", "table", "lists", "width", "common_topics", "estimator"]
    missing = errors["estimate"].isna()
    if missing.any():
        notes.append(f"{int(missing.sum())} samples without an estimate (left out of the errors)")
    err = error_table(errors[~missing], keys)
    err.insert(0, "track", track)
    err = err.sort_values(["part", "table", "width", "common_topics", "estimator"])
    err = err.reset_index(drop=True)
    bias = bias_table(samples[samples["part"] == "all"])
    bias.insert(0, "track", track)
    out = {"samples": samples, "errors": err, "bias": bias}
    if manual and not any(m in set(pooled) for m in manual):
        notes.append(
            "the manual runs are not pooled: their 'true' scores are on the full qrels with "
            "their unjudged documents non-relevant"
        )
    out["claims"] = claims_table(out, track, n_topics=int(samples["n_topics"].max()), manual=manual)
    return out


def run(
    root=None, out="out/webber2009", jobs: int | None = None, dask=None, progress=None, **params
) -> dict[str, pd.DataFrame]:
    """Run Algorithm 3 on every track under ``root`` (or ``synthetic=True``), write Parquet,
    the claims and the figures to ``out`` (None: write nothing) and return the frames.

    ``params``: ``seed``, ``repeats``, ``widths``, ``common``, ``topic_samples``,
    ``pool_depth``, ``rbp_p``, ``manual`` (names of manual runs: Table 1 right and Table 4),
    ``lenient``, ``synthetic`` (defaults in :data:`DEFAULTS`).
    """
    notes: list[str] = []

    def per_track(t: _common.Track, p: dict, jobs: int) -> dict:
        # synthetic: score against the complete judgments, so the true score is exact
        qrels = t.truth if t.truth is not None else t.qrels
        got = run_track(
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
            manual=p["manual"],
            progress=progress,
            notes=notes,
        )
        got["notes"] = pd.DataFrame({"track": t.name, "note": notes[:]})
        notes.clear()
        return got

    return _common.run_tracks(
        "webber2009",
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
    """Command line: ``python -m pbtools.papers.webber2009 ROOT [-o DIR] [--manual RUN,...] …``;
    exit status 2 for refused input (an unknown manual run)."""
    ap = _common.parser(
        __doc__, "out/webber2009", DEFAULTS["seed"], "seed of the system and topic samples"
    )
    ap.add_argument(
        "--repeats",
        type=int,
        default=DEFAULTS["repeats"],
        help="system samples per pool width (100, as the paper)",
    )
    ap.add_argument(
        "--widths",
        type=int,
        nargs="+",
        default=list(DEFAULTS["widths"]),
        help="pool widths (2 4 10 20 40, as the paper)",
    )
    ap.add_argument(
        "--common",
        type=int,
        nargs="+",
        default=list(DEFAULTS["common"]),
        help="numbers of common (fully judged) topics (5 10 20)",
    )
    ap.add_argument(
        "--topic-samples",
        type=int,
        default=DEFAULTS["topic_samples"],
        help="topic subsets per system sample (200, as the paper)",
    )
    ap.add_argument(
        "--pool-depth", type=int, default=DEFAULTS["pool_depth"], help="pool depth (10)"
    )
    ap.add_argument("--rbp-p", type=float, default=DEFAULTS["rbp_p"], help="RBP p (0.8)")
    ap.add_argument(
        "--manual",
        default="",
        metavar="RUN,...",
        help="the manual runs (comma-separated names, e.g. rutfmed): Table 1 (right) and "
        "Table 4 draw the unpooled run from them and pool the other runs (default: none, those "
        "claims n.a.)",
    )
    _common.add_seed_check(ap)
    a = _common.parse_args(ap, argv)
    t0 = time.perf_counter()
    params = dict(
        repeats=a.repeats,
        widths=tuple(a.widths),
        common=tuple(a.common),
        topic_samples=a.topic_samples,
        pool_depth=a.pool_depth,
        rbp_p=a.rbp_p,
        manual=tuple(x.strip() for x in a.manual.split(",") if x.strip()),
    )
    return _common.run_main(ap, a, run, report, t0, **params)


if __name__ == "__main__":
    sys.exit(main())
