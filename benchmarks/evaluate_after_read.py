"""``pbtools evaluate`` after the reading, in one process: the frame path against the array path.

``python benchmarks/evaluate_after_read.py [--shape trec2] [--repeat 5]`` reads the track once,
then times, in alternating rounds, what follows the reading: the frame path (the coverage
check, ``judge``, ``compute``, ``aggregate`` and the wide table, as ``pbtools evaluate`` ran
before issue 30's pandas-free path) and the array path (:func:`pbtools.cli.evaluate.
evaluate_encoded`: the same on :class:`~pbtools.io.encoded.EncodedRuns`, no pandas), both
printing to ``/dev/null``, with ``evaluate_speed.py``'s measures. Prints the median CPU
(``time.process_time``) and wall seconds of each, and their ratio. The conversion of the
reader's frames to codes (``EncodedRuns.from_frame``) is not timed: the reader gives them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (HERE, ROOT):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))


def main(argv=None) -> int:
    from evaluate_speed import LENIENT, PB_MEASURES, track_files
    from shapes import SHAPES, shape

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="trec2", choices=SHAPES)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    from pbtools import io
    from pbtools import measures as m
    from pbtools.cli import build_parser, commands_of
    from pbtools.cli.common import emit
    from pbtools.cli.evaluate import DEFAULT_MEASURES, evaluate_encoded
    from pbtools.cli.trec import trec_lines_of
    from pbtools.frames import judge
    from pbtools.io.encoded import EncodedQrels, EncodedRuns

    lenient = LENIENT.get(args.shape, False)
    qrels_file, run_dir = track_files(shape(args.shape))
    warnings.simplefilter("ignore")
    qrels = io.read_qrels(qrels_file, lenient=lenient)
    runs = io.read_runs(run_dir, lenient=lenient)
    enc_runs, enc_qrels = EncodedRuns.from_frame(runs), EncodedQrels.from_frame(qrels)
    ms = [a for name in PB_MEASURES for a in ("-m", name)]
    argv = ["evaluate", str(qrels_file), str(run_dir), *ms]
    cli = build_parser(commands_of(argv)).parse_args(argv)
    cli.trec_lines, cli.trec_strict = trec_lines_of(cli, DEFAULT_MEASURES)

    def frames():
        m.warn_coverage(runs, qrels)
        per = m.compute(judge(runs, qrels), qrels, PB_MEASURES)
        emit(m.aggregate(per, qrels=qrels).pb.wide(), "table", None)

    def arrays():
        evaluate_encoded(cli, enc_runs, enc_qrels)

    times: dict = {"frames": [], "arrays": []}
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        frames(), arrays()  # warm: imports, first-call caches
        for _ in range(args.repeat):
            for key, fn in (("frames", frames), ("arrays", arrays)):
                c0, w0 = time.process_time(), time.perf_counter()
                fn()
                times[key].append((time.process_time() - c0, time.perf_counter() - w0))
    med = {k: [statistics.median(x[i] for x in v) for i in (0, 1)] for k, v in times.items()}
    load = os.getloadavg()[0]
    print(f"{args.shape}: after reading, median of {args.repeat} rounds (load {load:.1f})")
    for key, (cpu, wall) in med.items():
        print(f"  {key:7s} CPU {cpu:.3f} s  wall {wall:.3f} s")
    ratio = med["arrays"][0] / med["frames"][0]
    print(f"  arrays / frames: CPU {ratio:.2f}×, wall {med['arrays'][1] / med['frames'][1]:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
