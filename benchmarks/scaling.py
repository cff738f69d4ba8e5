"""How ``pbtools analyze`` scales with runs and topics, and what ``--jobs 2`` buys (issue 15).

**Scaling.** ``pbtools.synth`` collections at 1×, 3× and 10× the runs (topics fixed) and at 1×,
3× and 10× the topics (runs fixed), from a base of 12 runs × 15 topics (4 runs per organisation,
2 unpooled runs, 2,000 documents per topic, 1,000 per run and topic, pool depth 100), each
analysed as ``pbtools analyze`` does (:func:`pbtools.experiments.analysis.analyze`: both
leave-out units × both run sets × P@5..P@100, estimators reduced, Webber & Park, Lipani) in a
fresh process (for its peak RSS) on one thread (``jobs=1``: the estimators' clocks then time
only their own work). Per point it prints

* the analysis time after parsing, split into the **pairwise** parts — the estimators that
  compare every evaluated run with every pooled run (Webber & Park, Lipani with the merge
  r_p ∘ r_u of every pair) — and **the rest** (pool inference, encoding, the reduced pool, the
  truth, significance); medians of ``--repeat`` analyses of the same frames;
* time per (run pair × topic) for the pairwise parts (ordered pairs of pooled runs R_p·(R_p−1)
  × topics) and per (run × topic) for the rest (R × T), in microseconds;
* the peak RSS of the process and its growth over the RSS after reading.

Each per-unit time is also given as a *marginal* time (Δtime / Δunits from the previous point),
from which the fixed cost of a call (imports warmed up, pandas and Tukey HSD set-up: it
dominates the 1× points) cancels out. A verdict line per direction says whether the marginal
per-unit time of the last step (3× → 10×) is within ``--tolerance`` (default ±35 %: the machine
is shared) of the first step's (1× → 3×) — flat (linear), falling (sub-linear) or growing
(super-linear); when the first step barely moves a part (its fixed cost dominates) that ratio
is noise, and the gross ratios printed beside it say more — and how the memory grows (the
exponent a of RSS growth ∝ factor^a: a ≈ 1 linear, a ≈ 2 runs²).

The pairwise time is measured by wrapping the ``estimate`` method of the registry's estimators
(:data:`pbtools.corrections.registry.ESTIMATORS`) for the duration of the measurement, which
needs no hook inside the estimators; the stage times are :attr:`Analysis.timings`.

**--jobs.** ``--jobs-compare SHAPE ...`` (``trec2``, ``synth127`` of ``benchmarks/shapes.py``, or
``scaling:RUNS:TOPICS`` a track of the scaling table, or a track directory) reads each track once
and alternates, ``--repeat`` times on the same frames, ``analyze(jobs=1)`` (one thread),
``analyze(jobs=2)`` (one process on two threads) and the same configurations on two
single-threaded worker processes (the split ``--jobs`` makes only beyond
``configs.CORES_PER_PROCESS`` cores, forced here): medians of the wall time and of the CPU
seconds (with workers, also the critical path: the parent's own work plus the slower worker's,
which is what the wall time would be on two otherwise idle cores).

Usage::

    python benchmarks/scaling.py                     # the scaling table (~10 min on 2 cores)
    python benchmarks/scaling.py --jobs-compare trec2 synth127 --repeat 3

Generated tracks are cached in ``$PBTOOLS_BENCH_CACHE`` (default ``~/.cache/pbtools-bench``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from shapes import cache_dir, shape  # noqa: E402

BASE = {"runs": 12, "topics": 15}
SHAPE = {"docs": 2000, "run_length": 1000, "depth": 100, "unpooled": 2, "seed": 15}
RUNS_PER_ORG = 3
PAIRWISE = ("webber", "lipani")


def track(runs: int, topics: int) -> Path:
    """The synthetic track of a point (generated once into the cache)."""
    from pbtools import synth

    tag = "-".join(f"{k}{v}" for k, v in SHAPE.items())
    root = cache_dir() / f"scaling-r{runs}-t{topics}-{tag}"
    if not (root / ".complete").exists():
        print(f"generating {runs} runs × {topics} topics in {root} ...", file=sys.stderr)
        orgs = max(1, runs // RUNS_PER_ORG)
        synth.generate(topics=topics, runs=runs, orgs=orgs, **SHAPE).write(root)
        (root / ".complete").write_text("ok\n")
    return root


def rss_mib() -> float:
    """Current resident set size in MiB (Linux /proc), NaN elsewhere."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # pragma: no cover - not Linux
        return math.nan


class EstimatorClock:
    """Seconds spent in each registered estimator's ``estimate`` while active."""

    def __init__(self):
        from pbtools.corrections.registry import ESTIMATORS

        self.classes = dict(ESTIMATORS)
        self.seconds = dict.fromkeys(self.classes, 0.0)
        self.saved = {}

    def __enter__(self):
        for name, cls in self.classes.items():
            original = cls.__dict__.get("estimate")
            self.saved[name] = original

            def timed(est, *a, _name=name, _fn=cls.estimate, **k):
                t = time.perf_counter()
                try:
                    return _fn(est, *a, **k)
                finally:
                    self.seconds[_name] += time.perf_counter() - t

            cls.estimate = timed
        return self

    def __exit__(self, *exc):
        for name, cls in self.classes.items():
            if self.saved[name] is None:
                del cls.estimate
            else:
                cls.estimate = self.saved[name]


def point(runs: int, topics: int, repeat: int) -> dict:
    """One point, measured in this process: stage times (medians), units, RSS."""
    from pbtools import io
    from pbtools.experiments.analysis import analyze

    path = track(runs, topics)
    t = time.perf_counter()
    col = io.load_collection([path])
    parse = time.perf_counter() - t
    frames = (col.runs, col.qrels, col.orgs)
    col.runs.attrs, col.qrels.attrs = {}, {}
    rss_read = rss_mib()
    rows = []
    for _ in range(repeat):
        with EstimatorClock() as clock:
            a = analyze(frames, jobs=1, progress=False)  # one thread
        pairwise = sum(clock.seconds[n] for n in PAIRWISE)
        rows.append(
            {
                "analysis": a.timings["analysis"],
                "pairwise": pairwise,
                "rest": a.timings["analysis"] - pairwise,
                "leave-outs": a.timings["leave-outs and truth"],
                "significance": a.timings["significance"],
            }
        )
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    props = a.properties.iloc[0]
    r_p, n_runs, n_topics = int(props["R_p"]), int(props["R"]), int(props["T"])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {
        "runs": n_runs,
        "topics": n_topics,
        "R_p": r_p,
        "rows": len(frames[0]),
        "parse": parse,
        **med,
        "pair_topics": r_p * (r_p - 1) * n_topics,
        "run_topics": n_runs * n_topics,
        "peak_mib": peak,
        "rss_read_mib": rss_read,
    }


def measure(runs: int, topics: int, repeat: int) -> dict:
    """:func:`point` in a fresh process (its own peak RSS)."""
    out = subprocess.run(
        [sys.executable, __file__, "--point", str(runs), str(topics), "--repeat", str(repeat)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _per_unit(points: list[dict], key: str, unit: str) -> tuple[list[float], list[float]]:
    """µs per unit at each point, and the marginal µs per unit from the previous point
    (Δtime / Δunits: the fixed cost of a call cancels out; NaN at the first point)."""
    gross = [1e6 * p[key] / p[unit] for p in points]
    marginal = [math.nan] + [
        1e6 * (b[key] - a[key]) / (b[unit] - a[unit])
        for a, b in zip(points[:-1], points[1:], strict=True)
    ]
    return gross, marginal


def table(points: list[dict]) -> str:
    """The Markdown table of one direction."""
    head = (
        "| runs | R_p | topics | rows | parse s | analysis s | pairwise s | rest s "
        "| of which significance s | µs per pair×topic | marginal | µs per run×topic | marginal "
        "| peak RSS MiB | RSS growth MiB |"
    )
    lines = [head, "|" + " --- |" * 15]
    pg, pm = _per_unit(points, "pairwise", "pair_topics")
    rg, rm = _per_unit(points, "rest", "run_topics")
    for i, p in enumerate(points):
        lines.append(
            f"| {p['runs']} | {p['R_p']} | {p['topics']} | {p['rows']:,} | {p['parse']:.2f} "
            f"| {p['analysis']:.2f} | {p['pairwise']:.2f} | {p['rest']:.2f} "
            f"| {p['significance']:.2f} | {pg[i]:.1f} | {pm[i]:.1f} | {rg[i]:.0f} | {rm[i]:.0f} "
            f"| {p['peak_mib']:.0f} | {p['peak_mib'] - p['rss_read_mib']:.0f} |"
        )
    return "\n".join(lines)


def verdict(direction: str, points: list[dict], tolerance: float) -> str:
    """Flat or not: the marginal time per unit of the last step against the first step (the
    fixed cost of a call, which dominates the small points, cancels out); the gross ratio
    last/first point is printed beside it. Memory: the exponent a of RSS growth ∝ factor^a."""
    parts = []
    for key, unit in (("pairwise", "pair_topics"), ("rest", "run_topics")):
        gross, marginal = _per_unit(points, key, unit)
        ratio = marginal[-1] / marginal[1]
        if abs(ratio - 1) <= tolerance:
            word = "flat: linear"
        elif ratio < 1:
            word = "falls: sub-linear"
        else:
            word = "GROWS: super-linear"
        parts.append(
            f"{key}: marginal per unit ×{ratio:.2f} ({word}); gross per unit "
            f"×{gross[-1] / gross[0]:.2f} (1× → 10×), ×{gross[-1] / gross[-2]:.2f} (3× → 10×)"
        )
    first, last = points[0], points[-1]
    factor = last[direction] / first[direction]
    grow0 = max(first["peak_mib"] - first["rss_read_mib"], 1.0)
    grow1 = max(last["peak_mib"] - last["rss_read_mib"], 1.0)
    a = math.log(grow1 / grow0) / math.log(factor)
    return (
        f"{direction} ×{factor:.0f}, flat = within ±{tolerance:.0%}: {'; '.join(parts)}; "
        f"memory growth over the frames ∝ {direction}^{a:.2f} ({grow0:.0f} → {grow1:.0f} MiB, "
        f"peak {first['peak_mib']:.0f} → {last['peak_mib']:.0f} MiB)"
    )


_CPU_LOG: Path | None = None
_GROUP = None


def timed_group(group, **shared):
    """``configs.config_group`` that also logs its worker's CPU seconds (``--jobs-compare``)."""
    out = _GROUP(group, **shared)
    with open(_CPU_LOG, "a") as f:  # the worker's CPU seconds since its fork, start-up included
        f.write(f"{os.getpid()} {time.process_time()}\n")
    return out


#: what ``--jobs-compare`` runs: label → (``jobs``, forced onto worker processes)
JOB_MODES = {
    "--jobs 1": (1, False),
    "--jobs 2": (2, False),
    "2 workers": (2, True),
}


def jobs_compare(names: list[str], repeat: int) -> None:
    """``analyze(jobs=1)`` (one thread), ``analyze(jobs=2)`` (this process on two threads, what
    ``--jobs 2`` does on a machine of up to ``configs.CORES_PER_PROCESS`` cores) and two
    single-threaded worker processes (the split ``--jobs`` uses beyond that, forced here) on
    the frames of each shape, alternated ``repeat`` times (medians).

    Wall times depend on what else the machine runs; CPU seconds do not, so each analysis also
    reports them: in one process, its CPU seconds (all threads); with workers, the parent's own
    plus each worker's (the parent + the slower worker is the wall time of the split on two
    idle cores, the sum the work done)."""
    import tempfile

    global _CPU_LOG, _GROUP
    from pbtools import io
    from pbtools.experiments import analysis, configs

    _GROUP = configs.config_group
    configs.config_group = timed_group  # pickled by reference as __main__.timed_group
    _CPU_LOG = Path(tempfile.mkdtemp()) / "cpu.log"
    defaults = configs.CORES_PER_PROCESS, configs.MIN_ROWS_PER_JOB
    for name in names:
        if name.startswith("scaling:"):  # scaling:RUNS:TOPICS, a point of the scaling table
            path = track(*map(int, name.split(":")[1:]))
        else:
            path = Path(name) if Path(name).is_dir() else shape(name)
        with warnings.catch_warnings():  # TREC-2 is dirty: its repairs are expected
            warnings.simplefilter("ignore")
            col = io.load_collection([path], lenient=True)
        col.runs.attrs, col.qrels.attrs = {}, {}
        frames = (col.runs, col.qrels, col.orgs)
        wall: dict[str, list[float]] = {m: [] for m in JOB_MODES}
        crit: dict[str, list[float]] = {m: [] for m in JOB_MODES}
        total: dict[str, list[float]] = {m: [] for m in JOB_MODES}
        for _ in range(repeat):
            for mode, (jobs, forced) in JOB_MODES.items():
                _CPU_LOG.write_text("")
                if forced:
                    configs.CORES_PER_PROCESS, configs.MIN_ROWS_PER_JOB = 1, 0
                t, c = time.perf_counter(), time.process_time()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        analysis.analyze(frames, jobs=jobs, progress=False)
                finally:
                    configs.CORES_PER_PROCESS, configs.MIN_ROWS_PER_JOB = defaults
                wall[mode].append(time.perf_counter() - t)
                own = time.process_time() - c  # this process, all its threads
                per_pid: dict[str, float] = {}
                for line in _CPU_LOG.read_text().split("\n"):
                    if line:
                        pid, cpu = line.split()
                        per_pid[pid] = max(per_pid.get(pid, 0.0), float(cpu))
                workers = list(per_pid.values())
                # with workers: the parent's own work (pool inference, significance) + the
                # slower worker is the critical path
                crit[mode].append(own + max(workers, default=0.0))
                total[mode].append(own + sum(workers))
        med = {k: {m: statistics.median(v[m]) for m in JOB_MODES} for k, v in
               (("wall", wall), ("crit", crit), ("total", total))}  # fmt: skip
        base = med["wall"]["--jobs 1"]
        print(f"{name}: {len(col.runs):,} rows; analyze after parsing, medians of {repeat}:")
        for mode in JOB_MODES:
            each = ", ".join(f"{t:.1f}" for t in wall[mode])
            cpu = (
                f"CPU {med['total'][mode]:.2f} s"
                if med["crit"][mode] == med["total"][mode]
                else f"CPU critical path {med['crit'][mode]:.2f} s, "
                f"total {med['total'][mode]:.2f} s"
            )
            print(
                f"  {mode:10s} wall {med['wall'][mode]:.2f} s = {med['wall'][mode] / base:.2f}× "
                f"--jobs 1 (each: {each}); {cpu}",
                flush=True,
            )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--factors", type=int, nargs="+", default=[1, 3, 10])
    ap.add_argument("--base-runs", type=int, default=BASE["runs"])
    ap.add_argument("--base-topics", type=int, default=BASE["topics"])
    ap.add_argument("--repeat", type=int, default=3, help="analyses per point (median)")
    ap.add_argument("--tolerance", type=float, default=0.35, help="flat: within ±this share")
    ap.add_argument(
        "--jobs-compare",
        nargs="+",
        metavar="SHAPE",
        help="trec2, synth127, scaling:RUNS:TOPICS or a TRACK_DIR",
    )
    ap.add_argument(
        "--point", type=int, nargs=2, metavar=("RUNS", "TOPICS"), help=argparse.SUPPRESS
    )
    args = ap.parse_args(argv)
    if args.point:
        print(json.dumps(point(*args.point, args.repeat)))
        return 0
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    if args.jobs_compare:
        jobs_compare(args.jobs_compare, args.repeat)
        return 0
    b_r, b_t = args.base_runs, args.base_topics
    for direction in ("runs", "topics"):
        pts = []
        for f in args.factors:
            r, t = (b_r * f, b_t) if direction == "runs" else (b_r, b_t * f)
            pts.append(measure(r, t, args.repeat))
            print(f"  measured {r} runs × {t} topics", file=sys.stderr, flush=True)
        print(f"\n{direction} × {args.factors} (base {b_r} runs × {b_t} topics):")
        print(table(pts))
        print(verdict(direction, pts, args.tolerance), flush=True)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
