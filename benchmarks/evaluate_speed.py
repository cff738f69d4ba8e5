"""Evaluation speed: pbtools vs pytrec_eval-terrier vs the parse floor, on every TREC-2 run.

Measures P@5..P@100, AP, nDCG and Bpref for the 38 TREC-2 ad hoc runs and prints, measured in this
one process run:

* the parse floor: reading all run files into one Arrow table with pyarrow's CSV reader
  (``benchmarks/parse_floor.py``), the least any tool must spend to see the data;
* pbtools end to end: ``io.read_runs`` + ``io.read_qrels`` + ``measures.evaluate``, and the
  evaluation alone (after parsing);
* pytrec_eval-terrier end to end: its own parsers (``pytrec_eval.parse_run``/``parse_qrel``,
  Python dicts) + ``RelevanceEvaluator.evaluate`` per run; and its evaluation alone.

Ratios are printed against the parse floor and against pytrec_eval. Targets (issue 2): pbtools
faster than pytrec_eval end to end, and evaluation after parsing ≤ 1× the parse time.

Usage: ``python benchmarks/evaluate_speed.py [--track ../shared/data/trec/TREC-2/Adhoc]
[--repeat 3]``. Each figure is the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from parse_floor import parse_floor  # noqa: E402

from pbtools import io, measures  # noqa: E402
from pbtools.frames import TrecFormatWarning  # noqa: E402

CUTOFFS = (5, 10, 15, 20, 30, 100)
PB_MEASURES = [f"P@{n}" for n in CUTOFFS] + ["AP", "nDCG", "Bpref"]
TE_MEASURES = {"P", "map", "ndcg", "bpref"}
DEFAULT_TRACK = HERE.parent.parent / "shared" / "data" / "trec" / "TREC-2" / "Adhoc"


def best_of(repeat: int, fn):
    """(best wall time in seconds, last result) of ``repeat`` calls of ``fn``."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def pbtools_end_to_end(run_files, qrels_file):
    runs = io.read_runs(run_files, lenient=True, run_id="file")
    qrels = io.read_qrels(qrels_file)
    return measures.evaluate(runs, qrels, PB_MEASURES, per_topic=True)


def pytrec_parse(run_files, qrels_file):
    import pytrec_eval

    with open(qrels_file) as fh:
        qrel = pytrec_eval.parse_qrel(fh)
    runs = {}
    for f in run_files:
        opener = gzip.open if str(f).endswith(".gz") else open
        with opener(f, "rt") as fh:
            # pytrec_eval's parser needs exactly 6 fields: apply the same lenient cleaning rule
            lines = [ln.split()[:6] for ln in fh if len(ln.split()) >= 6]
        run: dict = {}
        for qid, _, doc, _, score, _ in lines:
            d = run.setdefault(qid, {})
            s = float(score)
            if doc not in d or s > d[doc]:
                d[doc] = s
        runs[f] = run
    return qrel, runs


def pytrec_evaluate(qrel, runs):
    import pytrec_eval

    ev = pytrec_eval.RelevanceEvaluator(qrel, TE_MEASURES)
    return {name: ev.evaluate(run) for name, run in runs.items()}


def main(argv=None) -> int:
    warnings.simplefilter("ignore", TrecFormatWarning)  # the lenient repairs are known
    warnings.simplefilter("ignore", measures.CoverageWarning)  # rutcomb1/rutfmed: 25/24 topics
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--track", type=Path, default=DEFAULT_TRACK)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if not args.track.is_dir():
        print(f"track {args.track} not found (../shared absent?)", file=sys.stderr)
        return 1
    run_files = sorted((args.track / "Runs").glob("input.*"))
    qrels_file = next((args.track / "QRels").iterdir())

    t_floor, _ = best_of(args.repeat, lambda: parse_floor(run_files))
    t_pb, per = best_of(args.repeat, lambda: pbtools_end_to_end(run_files, qrels_file))
    runs = io.read_runs(run_files, lenient=True, run_id="file")
    qrels = io.read_qrels(qrels_file)
    t_pb_eval, _ = best_of(
        args.repeat, lambda: measures.evaluate(runs, qrels, PB_MEASURES, per_topic=True)
    )
    t_read, _ = best_of(args.repeat, lambda: io.read_runs(run_files, lenient=True, run_id="file"))
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        te = None
    else:
        t_te_parse, (qrel, te_runs) = best_of(1, lambda: pytrec_parse(run_files, qrels_file))
        t_te_eval, _ = best_of(args.repeat, lambda: pytrec_evaluate(qrel, te_runs))
        te = (t_te_parse + t_te_eval, t_te_parse, t_te_eval)

    rows = len(runs)
    print(
        f"TREC-2: {len(run_files)} run files, {rows:,} rows, {per['measure'].nunique()} "
        f"measures, {len(per):,} per-topic values; best of {args.repeat}"
    )
    print(f"{'':38s}{'seconds':>9s}{'× parse floor':>15s}")
    line = "{:38s}{:9.3f}{:15.2f}"
    print(line.format("parse floor (pyarrow, one table)", t_floor, 1.0))
    print(line.format("pbtools read_runs (lenient, ordered)", t_read, t_read / t_floor))
    print(line.format("pbtools evaluate (after parsing)", t_pb_eval, t_pb_eval / t_floor))
    print(line.format("pbtools end to end", t_pb, t_pb / t_floor))
    if te:
        print(line.format("pytrec_eval parse (Python dicts)", te[1], te[1] / t_floor))
        print(line.format("pytrec_eval evaluate", te[2], te[2] / t_floor))
        print(line.format("pytrec_eval end to end", te[0], te[0] / t_floor))
        print(
            f"pbtools end to end is {te[0] / t_pb:.2f}× faster than pytrec_eval end to end; "
            f"evaluation alone {te[2] / t_pb_eval:.2f}× faster"
        )
    else:
        print("pytrec_eval-terrier not installed: pip install pytrec-eval-terrier")
    return 0


if __name__ == "__main__":
    sys.exit(main())
