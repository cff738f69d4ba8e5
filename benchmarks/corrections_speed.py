"""Speed of the Lipani and Webber (on runs) estimators in leave-one-out experiments.

For TREC-2 Ad Hoc (``--shared``, default ``../shared`` relative to the repository) and for a
synthetic collection 10× larger (``pbtools.synth.generate``: 500 topics × 38 runs × 1000
documents = 19M run rows, written to a temporary directory and parsed back), prints

* the parse time — :func:`pbtools.io.read_runs` of the same run files, measured in this process
  (the baseline of every ratio);
* Lipani and Webber (on runs) alone: every evaluated pooled run in a leave-one-organisation-out
  at P@5, 10, 20, 30, 100 (``protocol="lipani2015"``, runs="all"); target ≤ 1× parse;
* the four whole experiments (reduced + webber + lipani; runs "all"/"top75" × by "org"/"run"),
  as four calls and as one ``leave_one_out_experiments`` call sharing the encoding and the
  merge (what ``pbtools analyze`` does); target ≤ ~2× parse together;
* times are measured in this process (pool inference done once beforehand, as ``pbtools
  analyze`` does); peak memory in a second, separate pass in a forked child: the child's peak
  resident set (``ru_maxrss``) minus its resident set at the start (the frames already loaded),
  i.e. what the call added. tracemalloc is not used (it slows numpy down several-fold).

    PYTHONPATH=. python benchmarks/corrections_speed.py [--shared ../shared] [--no-synth]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

CUTOFFS = (5, 10, 20, 30, 100)
EXPERIMENTS = [(runs, by) for runs in ("all", "top75") for by in ("org", "run")]


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def _child(conn, fn, args, kw):
    start = _rss_mib()
    t = time.perf_counter()
    fn(*args, **kw)
    dt = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    conn.send((dt, max(peak - start, 0.0)))
    conn.close()


def measured(fn, *args, **kw) -> tuple[float, float]:
    """(seconds, MiB added at peak) of ``fn(*args, **kw)`` run in a forked child."""
    ctx = mp.get_context("fork")
    a, b = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(b, fn, args, kw))
    p.start()
    out = a.recv()
    p.join()
    return out


def timed_and_peak(fn, *args, **kw) -> tuple[float, float]:
    """Seconds in this process, then the peak memory added in a separate forked pass."""
    t = time.perf_counter()
    fn(*args, **kw)
    dt = time.perf_counter() - t
    return dt, measured(fn, *args, **kw)[1]


def bench(label, frames, parse_s, pooled=None, depth=None):
    from pbtools.experiments import leave_one_out_experiment as loo
    from pbtools.pooling.inference import infer_pool

    if pooled is None:  # pool inference once, as `pbtools analyze` does
        info = infer_pool(frames[0], frames[1])
        pooled, depth = info.pooled_runs, info.depth
    measures = [f"P@{n}" for n in CUTOFFS]
    kw = {"measures": measures, "protocol": "lipani2015", "pooled": pooled, "depth": depth}
    print(f"{label}: parse (io.read_runs) {parse_s:.2f} s")
    for est in ("lipani", "webber"):
        dt, mb = timed_and_peak(loo, frames, leave_out="org", runs="all", estimators=(est,), **kw)
        print(
            f"  {est:8s} leave-one-org-out, all runs  {dt:7.2f} s = {dt / parse_s:5.2f}× parse"
            f"   peak +{mb:7.1f} MiB"
        )
    total = 0.0
    for runs, by in EXPERIMENTS:
        dt, mb = timed_and_peak(
            loo, frames, leave_out=by, runs=runs, estimators=("reduced", "webber", "lipani"), **kw
        )
        total += dt
        print(
            f"  experiment runs={runs:5s} by={by:3s}        {dt:7.2f} s = "
            f"{dt / parse_s:5.2f}× parse   peak +{mb:7.1f} MiB"
        )
    print(f"  4 experiments, separate calls      {total:7.2f} s = {total / parse_s:5.2f}× parse")
    from pbtools.experiments import leave_one_out_experiments

    configs = [{"leave_out": by, "runs": runs} for runs, by in EXPERIMENTS]
    dt, mb = timed_and_peak(
        leave_one_out_experiments, frames, configs, estimators=("reduced", "webber", "lipani"), **kw
    )
    print(
        f"  4 experiments, one shared call     {dt:7.2f} s = {dt / parse_s:5.2f}× parse"
        f"   peak +{mb:7.1f} MiB   (as pbtools analyze runs them)"
    )
    sys.stdout.flush()


def parse_time(run_dir) -> float:
    from pbtools.io import read_runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        read_runs(str(run_dir), lenient=True, float32=True, run_id="file")
        return time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[1].parent / "shared"))
    ap.add_argument("--no-synth", action="store_true")
    args = ap.parse_args(argv)
    from pbtools.experiments import load

    track = Path(args.shared) / "data/trec/TREC-2/Adhoc"
    if track.is_dir():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frames = load(str(track), protocol="lipani2015")
        bench("TREC-2", frames, parse_time(track / "Runs"))
    else:
        print(f"TREC-2: {track} not found, skipped")
    if args.no_synth:
        return
    from pbtools import synth

    # 10× TREC-2: 500 topics × 38 runs × 1000 documents (19 organisations)
    t = time.perf_counter()
    big = synth.generate(
        topics=500, runs=38, orgs=19, run_length=1000, docs=5000, depth=100, unpooled=0
    )
    gen_s = time.perf_counter() - t
    print(f"synthetic collection generated in {gen_s:.1f} s ({len(big.runs)} run rows)")
    with tempfile.TemporaryDirectory() as tmp:
        root = big.write(Path(tmp) / "synth")
        parse_s = parse_time(root / "Runs")
    bench("synth×10", (big.runs, big.qrels, big.orgs), parse_s, pooled=big.pooled, depth=100)


if __name__ == "__main__":
    main()
