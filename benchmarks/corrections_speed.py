"""Speed of the Lipani and Webber (on runs) estimators in a leave-one-organisation-out.

Every evaluated pooled run of TREC-2 Ad Hoc is scored at P@5..P@100 (all runs, PROTOCOL preset);
the time is printed as a ratio to the time io needs to parse the runs (target ≤ 1×), with the
peak traced memory. Then the same on a synthetic collection ~10× larger
(``pbtools.synth.generate``), when that module is available.

    python benchmarks/corrections_speed.py [TRACK_DIR]
"""

from __future__ import annotations

import sys
import time
import tracemalloc
import warnings
from pathlib import Path

from pbtools.experiments import leave_one_out_experiment

CUTOFFS = (5, 10, 20, 30, 100)
TRACK = Path(__file__).resolve().parents[1].parent / "shared/data/trec/TREC-2/Adhoc"


def timed(fn, *args, **kw):
    tracemalloc.start()
    t = time.perf_counter()
    out = fn(*args, **kw)
    dt = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, dt, peak / 2**20


def bench(label, frames, parse_s, **kw):
    for est in (("lipani",), ("webber",)):
        _, dt, mb = timed(leave_one_out_experiment, frames, cutoffs=CUTOFFS, by="org",
                          runs="all", estimators=est, protocol="lipani2015", **kw)
        print(f"{label:10s} {est[0]:8s} {dt:7.2f} s  = {dt / parse_s:5.2f}× parse "
              f"({parse_s:.2f} s)  peak {mb:7.1f} MiB")


def main(track=TRACK):
    from pbtools.experiments import load
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frames, parse_s, _ = timed(load, str(track), protocol="lipani2015")
    bench("TREC-2", frames, parse_s)
    sys.stdout.flush()
    try:
        from pbtools import synth
    except ImportError:
        print("synthetic: pbtools.synth not available, skipped")
        return
    # 10× TREC-2: 500 topics × 40 runs × 1000 documents (20 organisations)
    big, gen_s, _ = timed(synth.generate, topics=500, runs=40, orgs=20, run_length=1000,
                          docs=5000, depth=100, unpooled=0)
    print(f"synthetic collection generated in {gen_s:.1f} s ({len(big.runs)} run rows)")
    bench("synth×10", (big.runs, big.qrels, big.orgs), parse_s * 10, pooled=big.pooled,
          depth=100)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else TRACK)
