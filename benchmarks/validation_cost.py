"""What the Python API's input checks cost (``pbtools.validation``, issue 24 item 5).

On TREC-2's reader frames (``io.load_collection(..., lenient=True)``), in one process,
alternating: ``measures.evaluate`` with its checks (a top-level call), the same call with the
checks skipped (inside a validated scope, as pbtools' own calls are), and the two checks alone
(``check_frame`` of the runs and of the qrels). Prints the minimum and the median of
``--repeat`` rounds and the ratio checked / unchecked of the minima (the machine's load moves the
medians; the minima are the cost).

Usage: ``python benchmarks/validation_cost.py [--repeat 9] [--track DIR]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbtools import io, measures, validation  # noqa: E402

TREC2 = ROOT.parent / "shared" / "data" / "trec" / "TREC-2" / "Adhoc"
MEASURES = ["P@10", "AP", "nDCG@10"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--track", type=Path, default=TREC2)
    args = ap.parse_args()
    if not args.track.is_dir():
        sys.exit(f"no track at {args.track}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = io.load_collection([args.track], lenient=True)
    runs, qrels = c.runs, c.qrels
    times: dict[str, list[float]] = {"checked": [], "unchecked": [], "checks": []}
    for _ in range(args.repeat):
        t = time.perf_counter()
        measures.evaluate(runs, qrels, MEASURES, warn=False)
        times["checked"].append(time.perf_counter() - t)
        token = validation._INSIDE.set(True)  # as inside a validated call
        try:
            t = time.perf_counter()
            measures.evaluate(runs, qrels, MEASURES, warn=False)
            times["unchecked"].append(time.perf_counter() - t)
        finally:
            validation._INSIDE.reset(token)
        t = time.perf_counter()
        validation.check_frame(runs, "run")
        validation.check_frame(qrels, "qrels")
        times["checks"].append(time.perf_counter() - t)
    print(f"{args.track}: {len(runs):,} run rows, {len(qrels):,} judgments, {MEASURES}")
    for k, v in times.items():
        lo, mid = min(v) * 1000, statistics.median(v) * 1000
        print(f"  {k:9s} min {lo:7.1f} ms   median {mid:7.1f} ms")
    ratio = min(times["checked"]) / min(times["unchecked"])
    print(f"  evaluate checked / unchecked (minima): {ratio:.3f}")


if __name__ == "__main__":
    main()
