"""``evaluate -m all_trec`` against ``evaluate`` with the fourteen measures of issue 15, on TREC-2.

Issue 28, item 5: every measure of ``trec_eval -m all_trec`` goes through the one scoring
engine; ``pbtools evaluate -m all_trec`` must stay within 2× of ``pbtools evaluate`` with the
fourteen measures of ``benchmarks/evaluate_speed.py`` (P@5 … P@1000, AP, nDCG, Bpref, Rprec,
RR). Two figures, both as ratios to the fourteen-measure baseline measured in the same run:

* **whole process**: ``python -m pbtools evaluate QRELS RUNS --lenient -m …`` to ``/dev/null``,
  median wall time of ``--repeat`` alternating runs after one warm-up of each;
* **scoring**: ``measures.compute`` + ``measures.aggregate`` on the judged runs, in process,
  best of ``--repeat`` (the part the new kernels add to).

Usage: ``python benchmarks/all_trec_speed.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TRACK = ROOT.parent / "shared" / "data" / "trec" / "TREC-2" / "Adhoc"
FOURTEEN = [f"P@{n}" for n in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
FOURTEEN += ["AP", "nDCG", "Bpref", "Rprec", "RR"]


def _whole(qrels: Path, measures: list[str]) -> float:
    argv = [sys.executable, "-m", "pbtools", "evaluate", str(qrels), str(TRACK / "Runs")]
    argv += ["--lenient", *[x for m in measures for x in ("-m", m)]]
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from pbtools import frames, io
    from pbtools import measures as M
    from pbtools.measures.trec import trec_measures

    qrels_file = next((TRACK / "QRels").iterdir())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        every = [str(t.measure) for t in trec_measures(["all_trec"]) if t.measure is not None]
        qrels = io.read_qrels(qrels_file)
        judged = frames.judge(io.read_runs(TRACK / "Runs", lenient=True), qrels)
    every = list(dict.fromkeys(every))
    sets = {"14 measures": FOURTEEN, "all_trec": ["all_trec"]}
    times: dict[str, list[float]] = {k: [] for k in sets}
    for ms in sets.values():  # warm-up
        _whole(qrels_file, ms)
    for _ in range(args.repeat):
        for k, ms in sets.items():
            times[k].append(_whole(qrels_file, ms))
    scoring = {}
    for k, ms in (("14 measures", FOURTEEN), ("all_trec", every)):
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            M.aggregate(M.compute(judged, qrels, ms))
            best = min(best, time.perf_counter() - start)
        scoring[k] = best
    base_w, base_s = statistics.median(times["14 measures"]), scoring["14 measures"]
    print(f"TREC-2, {len(every)} measures in all_trec (those this pbtools computes)")
    for k in sets:
        w, s = statistics.median(times[k]), scoring[k]
        print(
            f"{k:<12s} whole process {w:6.2f} s ({w / base_w:.2f}×)   "
            f"scoring {s:5.2f} s ({s / base_s:.2f}×)"
        )


if __name__ == "__main__":
    main()
