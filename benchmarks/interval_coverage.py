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
issue's audit: width ≤ 0.0567). A miss names its reason (:data:`REASONS`, :func:`table`).

Speed: per collection, one leave-one-organisation-out experiment gives every pooled run's
error at once (:func:`pbtools.experiments.intervals.calibration_errors`), and
:func:`~pbtools.experiments.intervals.nested_intervals` gives every run's interval from the
other organisations' errors with one sort per (measure, estimator) — no loop over runs or
organisations. What remains a Python loop is one collection per seed and setting. ``--full``
(the issue's grid: depths 5 10 20 100, 20 40 80 120 runs, 20 seeds, 50 topics, and TREC-2)
took 10.8 minutes of CPU (38 minutes wall at load 8–14) on the shared 2-core machine; one
seed of depths 10 and 100 × 40 and 120 runs took 11.6 s of CPU against 24.6 s before the
nested intervals were computed at once, with the same coverage table.

    python3 benchmarks/interval_coverage.py                 # default grid + TREC-2
    python3 benchmarks/interval_coverage.py --full -o out/interval_coverage/full.parquet \\
        --markdown docs/uncertainty.md                      # the table of docs/uncertainty.md
    python3 benchmarks/interval_coverage.py --rows out/interval_coverage/full.parquet \\
        --markdown docs/uncertainty.md                      # the same table, re-rendered
    python3 benchmarks/interval_coverage.py --scale unjudged --no-synthetic

``--markdown FILE`` writes the report between ``<!-- coverage:begin -->`` and
``<!-- coverage:end -->`` of FILE; ``-o`` keeps the per-run rows (Parquet, with the settings
and the CPU time in its metadata), from which ``--rows`` renders the report again.
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

from pbtools import io, synth  # noqa: E402
from pbtools.experiments.intervals import calibration_errors, nested_intervals  # noqa: E402
from pbtools.frames import TrecFormatWarning  # noqa: E402
from pbtools.io import atomic  # noqa: E402
from pbtools.measures import evaluate  # noqa: E402

MEASURES = ("P@10", "P@30", "AP", "nDCG@10")
ESTIMATORS = ("reduced", "webber", "lipani")
LEVELS = (0.80, 0.90, 0.95)
#: the topic bootstrap's 95 % half-width at P@10 on TREC-2 in issue 26's audit
BOOTSTRAP_HALF_WIDTH = 0.085
TREC2 = HERE.parent.parent / "shared" / "data" / "trec" / "TREC-2" / "Adhoc"


def covered(calib: pd.DataFrame, level: float, scale, truth: pd.Series | None = None):
    """Per evaluated run at one level: covered (``pooled`` target; ``complete`` too when
    ``truth`` is given), ``width``, ``n_cal`` (its calibration errors: the other units'),
    ``tie`` (its error lies exactly on the interval's edge: \\|e\\| = q, covered only
    because the interval is closed) and ``theory`` (⌈(n + 1)c⌉/(n + 1), the coverage of a
    conformal interval over n exchangeable errors without ties; 1 when the interval is
    unbounded)."""
    out = nested_intervals(calib, confidence=level, scale=scale)
    width = (out["pi_high"] - out["pi_low"]).to_numpy()
    err = (out["true"] - out["estimate"]).to_numpy(dtype=np.float64)
    fin = pd.Series(np.isfinite(err).astype(int), index=out.index)
    g = fin.groupby([out["measure"], out["estimator"]], sort=False).transform("sum")
    own = fin.groupby([out["measure"], out["estimator"], out["left_out"]], sort=False)
    n = (g - own.transform("sum")).to_numpy()
    k = np.minimum(np.ceil((n + 1) * level - 1e-9), n + 1)
    half = out["halfwidth"].to_numpy(dtype=np.float64)
    frame = out[["name", "measure", "estimator"]].assign(
        level=level,
        pooled=out["covered"].to_numpy(dtype=float),
        width=width,
        n_cal=n,
        tie=(np.isfinite(half) & (np.abs(np.abs(err) - half) <= 1e-12)).astype(float),
        theory=k / (n + 1),
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


#: the reasons a setting misses the target, in the order they are checked (see :func:`table`)
REASONS = {
    "under": "coverage below nominal - 2",
    "n_cal": "too few calibration runs for a finite interval (19 at 95 %): [0, 1]",
    "finite n": "the conformal level itself, ceil((n + 1)c)/(n + 1), exceeds nominal + 3",
    "ties": "runs whose error equals the quantile exactly (|e| = q); without them in target",
    "over": "coverage above nominal + 3, not explained by the above",
}


def table(rows: pd.DataFrame, targets=("pooled", "complete")) -> pd.DataFrame:
    """Coverage (%) and mean width per setting, estimator, measure and level (means over the
    runs of a collection, then over the seeds), marked against the target.

    ``target`` is ``ok`` when the pooled coverage lies within [nominal − 2, nominal + 3] pp at
    every level, else ``MISS`` with the reasons (:data:`REASONS`), checked per level in turn:
    ``under`` (below nominal − 2); above nominal + 3: ``n_cal`` (the interval is unbounded:
    fewer than 1/α − 1 calibration runs), ``finite n`` (the conformal level ⌈(n + 1)c⌉/(n + 1)
    itself is above nominal + 3), ``ties`` (the coverage without the runs on the interval's
    edge is within the target), else ``over``. ``ties`` is the largest share (%) over the
    levels of runs on the edge; ``se`` the largest standard error (pp) over the levels of the
    pooled coverage's mean over the seeds (NaN for one collection)."""
    keys = ["depth", "runs", "estimator", "measure", "level"]
    cols = [t for t in targets if t in rows.columns] + ["width", "n_cal", "tie", "theory"]
    per_seed = rows.groupby([*keys, "seed"], sort=False)[cols].mean()
    mean = per_seed.groupby(keys, sort=False).mean().reset_index()
    wide = mean.pivot_table(
        index=["depth", "runs", "estimator", "measure"], columns="level", values=cols, sort=False
    )
    out = pd.DataFrame(index=wide.index)
    for t in cols[:-4]:
        for lv in LEVELS:
            out[f"{t[:4]}{int(lv * 100)}"] = 100 * wide[(t, lv)]
    out["w95"] = wide[("width", 0.95)]
    out["n_cal"] = wide[("n_cal", 0.95)]
    out["ties"] = 100 * pd.concat([wide[("tie", lv)] for lv in LEVELS], axis=1).max(axis=1)
    # the Monte Carlo standard error of the pooled coverage (over the seeds; largest level)
    se = per_seed["pooled"].groupby(keys, sort=False).sem().unstack("level")
    out["se"] = 100 * se.reindex(out.index).max(axis=1) if per_seed.index.nlevels else np.nan
    reasons = [[] for _ in range(len(out))]
    for lv in LEVELS:
        nominal = 100 * lv
        c = out[f"pool{int(lv * 100)}"].to_numpy()
        strict = c - 100 * wide[("tie", lv)].to_numpy()
        theory = 100 * wide[("theory", lv)].to_numpy()
        for i in range(len(out)):  # the settings: a few hundred rows
            if c[i] < nominal - 2 - 1e-9:
                why = "under"
            elif c[i] <= nominal + 3 + 1e-9:
                continue
            elif theory[i] >= 100 - 1e-9:
                why = "n_cal"
            elif theory[i] > nominal + 3 + 1e-9:
                why = "finite n"
            elif strict[i] <= nominal + 3 + 1e-9:
                why = "ties"
            else:
                why = "over"
            if why not in reasons[i]:
                reasons[i].append(why)
    order = list(REASONS)
    out["target"] = [
        "ok" if not r else "MISS (" + ", ".join(sorted(r, key=order.index)) + ")" for r in reasons
    ]
    return out.reset_index()


def render(t: pd.DataFrame) -> str:
    """The table as Markdown (coverage in %, widths with 3 decimals)."""
    cols = list(t.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in t.itertuples(index=False):
        cells = []
        for c, v in zip(cols, r, strict=True):
            if isinstance(v, float | np.floating):
                cells.append(f"{float(v):.3f}" if c.startswith("w") else f"{float(v):.1f}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def trec_width_lines(t: pd.DataFrame) -> list[str]:
    """TREC-2's mean 95 % width at P@10 against a third of the topic bootstrap's, per estimator."""
    limit = 2 * BOOTSTRAP_HALF_WIDTH / 3
    return [
        f"TREC-2 P@10 {r.estimator}: mean 95 % width {r.w95:.4f} vs a third of the bootstrap "
        f"width {limit:.4f}: {'ok' if r.w95 <= limit else 'MISS'}"
        for r in t[t["measure"] == "P@10"].itertuples(index=False)
    ]


def report(rows: pd.DataFrame, meta: dict) -> str:
    """The Markdown report of the per-run ``rows`` (synthetic and TREC-2): the tables with
    their settings, the reasons of the misses, the TREC-2 width check."""
    parts = []
    if "cpu_seconds" in meta:
        parts += [
            f"{meta['cpu_seconds'] / 60:.1f} minutes of CPU ({meta['wall_seconds'] / 60:.1f} "
            "minutes wall) for the whole report.",
            "",
        ]
    syn = rows[rows["collection"] == "synthetic"]
    if len(syn):
        t = table(syn)
        miss = int((t["target"] != "ok").sum())
        parts += [
            f"Synthetic collections (`pbtools.synth`, complete judgments, two runs per "
            f"organization): {meta['seeds']} seeds, {meta['topics']} topics, scale "
            f"{meta['scale']}; {len(t)} settings, {len(t) - miss} within the target, "
            f"{miss} missing it. pool / comp: % of the runs whose pooled / complete-judgment "
            "score the 80, 90, 95 % interval covers (mean over the seeds); w95: mean 95 % "
            "width; n_cal: calibration runs per interval; ties: % of the runs on the "
            "interval's edge (largest over the levels); se: standard error of the pooled "
            "coverage's mean over the seeds (pp, largest over the levels).",
            "",
            render(t),
            "",
        ]
    tr = rows[rows["collection"] == "TREC-2"]
    if len(tr):
        t = table(tr.drop(columns=["complete"], errors="ignore"), targets=("pooled",))
        parts += [
            f"TREC-2 ad hoc, nested leave-one-organization-out ({tr['name'].nunique()} "
            "evaluated runs, pooled score):",
            "",
            render(t),
            "",
            *[line + "  " for line in trec_width_lines(t)],
            "",
        ]
    parts += ["Reasons of a miss:", ""]
    parts += [f"* `{k}`: {v}" for k, v in REASONS.items()]
    return "\n".join(parts) + "\n"


BEGIN, END = "<!-- coverage:begin -->", "<!-- coverage:end -->"


def write_markdown(path: Path, text: str, command: str) -> None:
    """``text`` with its generator's note between :data:`BEGIN` and :data:`END` in ``path``
    (replacing the block there), or as the whole file when it has no block."""
    block = "\n".join(
        [BEGIN, f"<!-- generated by `{command}`: do not edit -->", "", text.rstrip("\n"), END]
    )
    old = path.read_text() if path.is_file() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + block + rest.split(END, 1)[1]
    else:
        new = block + "\n"
    atomic.write_text(path, new)


def _setting(a, key: str, compute) -> tuple[pd.DataFrame, float, float]:
    """One setting's rows and its CPU and wall seconds: read from ``a.checkpoint`` when an
    earlier run wrote them there, else computed (and written there)."""
    path = a.checkpoint / f"{key}.parquet" if a.checkpoint else None
    if path is not None and path.is_file():
        rows = io.read_parquet(path)
        meta = rows.attrs.get("metadata") or {}
        return rows, float(meta.get("cpu_seconds", 0)), float(meta.get("wall_seconds", 0))
    t0, c0 = time.perf_counter(), time.process_time()
    rows = compute()
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        io.write_parquet(rows, path, metadata={"cpu_seconds": cpu, "wall_seconds": wall})
    return rows, cpu, wall


def run(a: argparse.Namespace) -> tuple[pd.DataFrame, float, float]:
    """Every collection's per-run rows (synthetic grid, then TREC-2), progress on stderr, and
    the CPU and wall seconds they took (summed over the settings, earlier runs' included when
    ``--checkpoint`` resumes)."""
    scale = None if a.scale == "none" else a.scale
    parts, cpu, wall = [], 0.0, 0.0
    if not a.no_synthetic:
        for depth in a.depths:
            for runs in a.runs:
                # one collection per seed: each is its own leave-out experiment (all units at
                # once) and its own nested intervals (all units at once)
                def compute(depth=depth, runs=runs):
                    rows = [
                        synthetic_setting(depth, runs, s, a.topics, scale) for s in range(a.seeds)
                    ]
                    return pd.concat(rows, ignore_index=True).assign(collection="synthetic")

                key = f"synthetic-d{depth}-r{runs}-s{a.seeds}-t{a.topics}-{a.scale}"
                rows, c, w = _setting(a, key, compute)
                parts.append(rows)
                cpu, wall = cpu + c, wall + w
                print(
                    f"  synthetic d={depth} runs={runs}: {w:.0f} s wall, {c:.0f} s cpu "
                    f"(total {cpu:.0f} s cpu)",
                    file=sys.stderr,
                    flush=True,
                )
    if not a.no_trec:
        if not a.trec.is_dir():
            print(f"TREC-2: {a.trec} not found; skipped", file=sys.stderr)
        else:
            rows, c, w = _setting(
                a,
                f"trec2-{a.scale}",
                lambda: trec_setting(a.trec, scale).assign(collection="TREC-2"),
            )
            parts.append(rows)
            cpu, wall = cpu + c, wall + w
    return (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()), cpu, wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[5, 10, 20, 100])
    ap.add_argument("--runs", type=int, nargs="+", default=[40])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--full", action="store_true", help="runs 20 40 80 120, 20 seeds, 50 topics")
    ap.add_argument("--scale", choices=("none", "unjudged"), default="none")
    ap.add_argument("--trec", type=Path, default=TREC2, help="the TREC-2 ad hoc track")
    ap.add_argument("--no-trec", action="store_true")
    ap.add_argument("--no-synthetic", action="store_true")
    ap.add_argument("-o", "--output", type=Path, help="write the per-run rows as Parquet")
    ap.add_argument(
        "--checkpoint",
        type=Path,
        metavar="DIR",
        help="keep each setting's rows in DIR and reuse those already there (resume)",
    )
    ap.add_argument(
        "--rows", type=Path, help="report the per-run rows of an earlier --output (no run)"
    )
    ap.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="write the report into FILE between <!-- coverage:begin --> and "
        "<!-- coverage:end --> (the whole file when it has no such block)",
    )
    a = ap.parse_args(argv)
    if a.full:
        a.runs, a.seeds, a.topics = [20, 40, 80, 120], 20, 50
    if a.rows:
        rows = io.read_parquet(a.rows)
        meta = rows.attrs.get("metadata") or {}
    else:
        rows, cpu, wall = run(a)
        meta = {
            "command": " ".join(
                [
                    "python3 benchmarks/interval_coverage.py",
                    *(sys.argv[1:] if argv is None else argv),
                ]
            ),
            "seeds": a.seeds,
            "topics": a.topics,
            "scale": a.scale,
            "depths": a.depths,
            "runs": a.runs,
            "cpu_seconds": round(cpu, 1),
            "wall_seconds": round(wall, 1),
        }
    if rows.empty:
        print("nothing to report", file=sys.stderr)
        return 2
    text = report(rows, meta)
    print("# interval coverage; target: pooled coverage within [nominal - 2, nominal + 3] pp\n")
    print(text)
    print(f"time: {meta['wall_seconds']:.0f} s wall, {meta['cpu_seconds']:.0f} s cpu")
    if a.output and not a.rows:
        io.write_parquet(rows, a.output, metadata=meta)
    if a.markdown:
        write_markdown(
            a.markdown, text, str(meta.get("command", "benchmarks/interval_coverage.py"))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
