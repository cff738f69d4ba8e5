"""Coverage of the prediction intervals of ``pbtools.correct`` (issue 26): the evidence.

How often does the interval ``[pi_low, pi_high]`` (:mod:`pbtools.experiments.intervals`) contain
the score the run would have had had it contributed to the pool, and how wide is it?

* **Synthetic** (:func:`pbtools.synth.generate`, complete judgments): per pool depth and number
  of runs (two runs per organisation), ``--seeds`` collections. In each, every pooled run's
  interval is built by nested leave-one-organisation-out: from the leave-one-out errors of the
  *other* organisations' runs only (:func:`pbtools.experiments.intervals.nested_intervals`),
  and checked against its pooled score (``pooled``) and its score on the complete judgments
  (``complete``). Coverage is the share of runs covered, averaged over the seeds.
* **TREC-2** (``--trec DIR``, default ``../shared/data/trec/TREC-2/Adhoc`` when present): the
  same nested leave-one-organisation-out on the real pool (pooled score only).

Printed per setting, estimator and measure: the coverage of the 80, 90 and 95 % intervals (in
%) and their mean width, each setting marked against the target of issue 26: coverage of the
pooled score within [nominal − 2, nominal + 3] percentage points at every level, and on TREC-2 a
mean 95 % width at P@10 at most a third of the topic bootstrap's (half-width ≈ 0.085 in the
issue's audit: width ≤ 0.0567).

The default grid takes about 3 minutes of CPU on 2 cores (depths 5 10 20 100, 40 runs, 20 seeds,
20 topics); ``--runs 20 40 --topics 30`` is the grid of ``docs/uncertainty.md`` (about 10
minutes of CPU); ``--full`` the issue's whole grid (20, 40, 80, 120 runs, 30 seeds, 50 topics:
hours on 2 cores).

    python3 benchmarks/interval_coverage.py                 # default grid + TREC-2
    python3 benchmarks/interval_coverage.py --runs 20 40 --topics 30   # docs/uncertainty.md
    python3 benchmarks/interval_coverage.py --full          # the whole grid
    python3 benchmarks/interval_coverage.py --scale unjudged --no-synthetic
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from pbtools import synth  # noqa: E402
from pbtools.experiments.intervals import calibration_errors, nested_intervals  # noqa: E402
from pbtools.frames import TrecFormatWarning  # noqa: E402
from pbtools.measures import evaluate  # noqa: E402

MEASURES = ("P@10", "P@30", "AP", "nDCG@10")
ESTIMATORS = ("reduced", "webber", "lipani")
LEVELS = (0.80, 0.90, 0.95)
#: the topic bootstrap's 95 % half-width at P@10 on TREC-2 in issue 26's audit
BOOTSTRAP_HALF_WIDTH = 0.085
TREC2 = HERE.parent.parent / "shared" / "data" / "trec" / "TREC-2" / "Adhoc"


def covered(calib: pd.DataFrame, level: float, scale, truth: pd.Series | None = None):
    """Per row: covered (pooled target), covered (complete target), width."""
    out = nested_intervals(calib, confidence=level, scale=scale)
    width = (out["pi_high"] - out["pi_low"]).to_numpy()
    g = out.groupby(["measure", "estimator"], sort=False)["name"].transform("size")
    own = out.groupby(["measure", "estimator", "left_out"], sort=False)["name"].transform("size")
    frame = out[["name", "measure", "estimator"]].assign(
        level=level, pooled=out["covered"].to_numpy(dtype=float), width=width, n_cal=g - own
    )
    if truth is not None:
        key = pd.MultiIndex.from_frame(out[["name", "measure"]].astype(str))
        t = truth.reindex(key).to_numpy(dtype=np.float64)
        lo, hi = out["pi_low"].to_numpy(), out["pi_high"].to_numpy()
        frame["complete"] = ((lo - 1e-12 <= t) & (t <= hi + 1e-12)).astype(float)
    return frame


def synthetic_setting(depth: int, runs: int, seed: int, topics: int, scale) -> pd.DataFrame:
    """One synthetic collection's per-run coverage rows at every level."""
    c = synth.generate(
        topics=topics,
        docs=max(600, 10 * depth),
        runs=runs,
        orgs=runs // 2,
        run_length=max(100, depth),
        depth=depth,
        unpooled=0,
        seed=seed,
    )
    frames = (c.runs, c.qrels, c.orgs)
    calib = calibration_errors(frames, MEASURES, ESTIMATORS, pooled=c.pooled, depth=depth)
    complete = evaluate(c.runs, c.truth, list(MEASURES))
    truth = complete.set_index([complete["name"].astype(str), complete["measure"].astype(str)])[
        "value"
    ]
    rows = pd.concat([covered(calib, lv, scale, truth) for lv in LEVELS], ignore_index=True)
    return rows.assign(depth=depth, runs=runs, seed=seed)


def trec_setting(path: Path, scale) -> pd.DataFrame:
    """TREC-2's per-run coverage rows (nested leave-one-organisation-out)."""
    from pbtools.experiments.load import load
    from pbtools.pooling.inference import infer_pool

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        runs, qrels, orgs = load(str(path))
    info = infer_pool(runs, qrels)
    calib = calibration_errors(
        (runs, qrels, orgs), MEASURES, ESTIMATORS, pooled=info.pooled_runs, depth=info.depth
    )
    rows = pd.concat([covered(calib, lv, scale) for lv in LEVELS], ignore_index=True)
    return rows.assign(depth=int(info.depth), runs=len(info.pooled_runs), seed=0)


def table(rows: pd.DataFrame, targets=("pooled", "complete")) -> pd.DataFrame:
    """Coverage (%) and mean width per setting, estimator, measure and level; means over the
    runs of a collection, then over the seeds."""
    keys = ["depth", "runs", "estimator", "measure", "level"]
    cols = [t for t in targets if t in rows.columns] + ["width", "n_cal"]
    per_seed = rows.groupby([*keys, "seed"], sort=False)[cols].mean()
    mean = per_seed.groupby(keys, sort=False).mean().reset_index()
    wide = mean.pivot_table(
        index=["depth", "runs", "estimator", "measure"], columns="level", values=cols, sort=False
    )
    out = pd.DataFrame(index=wide.index)
    for t in cols:
        for lv in LEVELS:
            name = f"w{int(lv * 100)}" if t == "width" else f"{t[:4]}{int(lv * 100)}"
            if t in ("width", "n_cal") and lv != 0.95:
                continue
            if t == "n_cal":
                out["n_cal"] = wide[(t, lv)]
                continue
            v = wide[(t, lv)]
            out[name] = v if t == "width" else 100 * v
    ok = np.ones(len(out), dtype=bool)
    for lv in LEVELS:
        c = out[f"pool{int(lv * 100)}"]
        ok &= ((c >= 100 * lv - 2 - 1e-9) & (c <= 100 * lv + 3 + 1e-9)).to_numpy()
    few = (out["n_cal"] < 1 / (1 - max(LEVELS)) - 1 - 1e-9).to_numpy()
    out["target"] = np.where(ok, "ok", np.where(few, "MISS (n_cal < 19)", "MISS"))
    return out.reset_index()


def render(t: pd.DataFrame) -> str:
    """The table as Markdown (coverage in %, widths with 3 decimals)."""
    cols = list(t.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in t.itertuples(index=False):
        cells = []
        for c, v in zip(cols, r, strict=True):
            if isinstance(v, float):
                cells.append(f"{v:.3f}" if c.startswith("w") else f"{v:.1f}")
            elif isinstance(v, float | np.floating):
                cells.append(f"{float(v):.1f}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[5, 10, 20, 100])
    ap.add_argument("--runs", type=int, nargs="+", default=[40])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--full", action="store_true", help="runs 20 40 80 120, 30 seeds, 50 topics")
    ap.add_argument("--scale", choices=("none", "unjudged"), default="none")
    ap.add_argument("--trec", type=Path, default=TREC2, help="the TREC-2 ad hoc track")
    ap.add_argument("--no-trec", action="store_true")
    ap.add_argument("--no-synthetic", action="store_true")
    ap.add_argument("-o", "--output", type=Path, help="write the per-run rows as Parquet")
    a = ap.parse_args(argv)
    if a.full:
        a.runs, a.seeds, a.topics = [20, 40, 80, 120], 30, 50
    scale = None if a.scale == "none" else a.scale
    t0 = time.perf_counter()
    parts = []
    print(
        f"# interval coverage (scale: {a.scale}); target: pooled coverage within "
        "[nominal - 2, nominal + 3] pp\n"
    )
    if not a.no_synthetic:
        for depth in a.depths:
            for runs in a.runs:
                rows = [synthetic_setting(depth, runs, s, a.topics, scale) for s in range(a.seeds)]
                parts.append(pd.concat(rows, ignore_index=True).assign(collection="synthetic"))
                print(
                    f"  synthetic d={depth} runs={runs}: {time.perf_counter() - t0:.0f} s",
                    file=sys.stderr,
                )
        syn = pd.concat(parts, ignore_index=True)
        print(
            f"## synthetic: {a.seeds} seeds, {a.topics} topics, two runs per organisation; "
            "cover: % of runs (mean over seeds), pool = pooled score, comp = complete "
            "judgments; w95: mean 95 % width; n_cal: calibration runs per interval (a finite "
            "95 % interval needs 19)\n"
        )
        print(render(table(syn)))
        print()
    if not a.no_trec:
        if not a.trec.is_dir():
            print(f"## TREC-2: {a.trec} not found; skipped\n")
        else:
            tr = trec_setting(a.trec, scale).assign(collection="TREC-2")
            parts.append(tr)
            t = table(tr, targets=("pooled",))
            print("## TREC-2 ad hoc, nested leave-one-organisation-out (pooled score)\n")
            print(render(t))
            p10 = t[(t["measure"] == "P@10")]
            limit = 2 * BOOTSTRAP_HALF_WIDTH / 3
            for r in p10.itertuples(index=False):
                mark = "ok" if r.w95 <= limit else "MISS"
                print(
                    f"\nTREC-2 P@10 {r.estimator}: mean 95 % width {r.w95:.4f} vs a third of "
                    f"the bootstrap width {limit:.4f}: {mark}",
                    end="",
                )
            print("\n")
    if a.output and parts:
        pd.concat(parts, ignore_index=True).to_parquet(a.output)
    print(f"time: {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
