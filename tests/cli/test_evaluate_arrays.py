"""``pbtools evaluate`` after the reading runs without pandas (issue 30 item 1).

The encoded runs and qrels are read here (with pandas) and pickled; a child process in which
``import pandas`` fails runs :func:`pbtools.cli.evaluate.evaluate_encoded` on them for several
forms of the command (``pbtools.io``'s package module is bypassed there: it loads pandas until
the reader's side makes it lazy). Its output must be the command line's, byte for byte, and
pandas must never have been imported.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from pbtools.cli import build_parser, cli_words, commands_of

REPO = Path(__file__).resolve().parents[2]

_CHILD = r"""
import contextlib, io, pickle, sys, types, warnings


class _Block:  # import pandas fails
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError(f"pandas is blocked here ({name})")


sys.meta_path.insert(0, _Block())
repo = sys.argv[1]
sys.path.insert(0, repo)
import pbtools

stub = types.ModuleType("pbtools.io")  # the package without its __init__ (which loads pandas)
stub.__path__ = [repo + "/pbtools/io"]
sys.modules["pbtools.io"] = stub
from pbtools.cli import build_parser, cli_words, commands_of
from pbtools.cli.evaluate import DEFAULT_MEASURES, evaluate_encoded
from pbtools.cli.trec import check_trec_options, trec_lines_of
from pbtools.errors import InputError

with open(sys.argv[2], "rb") as f:
    cases = pickle.load(f)
out = []
for runs, qrels, argv in cases:
    args = build_parser(commands_of(argv)).parse_args(argv)
    args.trec_lines, args.trec_strict = trec_lines_of(args, DEFAULT_MEASURES)
    check_trec_options(args)
    text = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(text):
        warnings.simplefilter("always")
        try:
            status = evaluate_encoded(args, runs, qrels)
        except InputError as e:
            status, text = 2, io.StringIO("error: " + str(e))
    said = [cli_words(str(w.message)) for w in caught]
    out.append((text.getvalue(), said, status))
assert not [m for m in sys.modules if m == "pandas" or m.startswith("pandas.")]
with open(sys.argv[3], "wb") as f:
    pickle.dump(out, f)
"""


def _encoded(qrels: Path, runs: Path, lenient: bool):
    from pbtools import io
    from pbtools.io.encoded import EncodedQrels, EncodedRuns

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reader's repairs (TREC-2)
        q = EncodedQrels.from_frame(io.read_qrels(qrels, lenient=lenient))
        r = EncodedRuns.from_frame(io.read_runs(runs, lenient=lenient))
    q.repairs = r.repairs = None  # printed by the reader; a frame (pandas) when present
    return r, q


def _frame_path(argv: list[str], runs, qrels):
    """The pandas path of the same form (the frames' ``evaluate``, ``aggregate`` and output,
    as the command line ran before issue 30): (stdout, warnings, status)."""
    import contextlib
    import io
    import warnings

    from pbtools import measures as m
    from pbtools.cli import evaluate as ev
    from pbtools.cli.trec import check_trec_options, trec_lines_of, truncate
    from pbtools.errors import InputError

    args = build_parser(commands_of(argv)).parse_args(argv)
    args.trec_lines, args.trec_strict = trec_lines_of(args, ev.DEFAULT_MEASURES)
    check_trec_options(args)
    rf = truncate(runs.frame(), args.max_per_topic)
    qr = qrels.frame()
    ms = list(dict.fromkeys(t.measure for t in args.trec_lines if t.measure is not None))
    mode = "all" if args.all_topics else None
    text = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(text):
        warnings.simplefilter("always")
        try:
            per = m.evaluate(rf, qr, ms, per_topic=True, topics=mode)
            avg = m.aggregate(per, qrels=qr, topics=mode)
            status = ev.output(args, rf, qr, per, avg, args.trec_lines, args.trec_strict)
        except InputError as e:
            status, text = 2, io.StringIO("error: " + str(e))
    return text.getvalue(), [cli_words(str(w.message)) for w in caught], status


def _compare(tmp: Path, tracks: list, lenient=False):
    """The child's output of each form against the frame path's (this process); ``tracks``:
    ``(qrels, runs, forms)``, one child process for all."""
    cases = []
    for qrels, runs, forms in tracks:
        r, q = _encoded(qrels, runs, lenient)
        flag = ["--lenient"] if lenient else []
        cases += [(r, q, ["evaluate", str(qrels), str(runs), *f, *flag]) for f in forms]
    src = tmp / "in.pickle"
    src.write_bytes(pickle.dumps(cases))
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(REPO), str(src), str(tmp / "out.pickle")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert child.returncode == 0, child.stderr
    got = pickle.loads((tmp / "out.pickle").read_bytes())
    for (r, q, argv), result in zip(cases, got, strict=True):
        assert result == _frame_path(argv, r, q), argv


def test_evaluate_after_reading_imports_no_pandas(tiny_collection, tmp_path):
    """Every output form on the tiny track (a topic only one run answers: coverage warnings),
    and a run sharing no topic with the qrels (the empty result)."""
    qrels, runs = tiny_collection / "QRels" / "qrels", tiny_collection / "Runs"
    forms = [
        [],
        ["-q"],
        ["-c", "-q", "-m", "P@2", "-m", "GMAP", "-m", "NumRet", "-m", "RBP(p=0.5)@2"],
        ["--trec", "-q", "-m", "all_trec"],
        ["--trec", "-c", "-M", "1"],
        ["--format", "tsv", "-q", "-m", "relstring.3", "-m", "AP"],
        ["--format", "tsv"],
    ]
    (tmp_path / "q").write_text("1 0 d1 1\n")
    (tmp_path / "r").write_text("2 Q0 d1 1 1.0 x\n")
    empty = (tmp_path / "q", tmp_path / "r", [[], ["-c", "--trec"]])
    _compare(tmp_path, [(qrels, runs, forms), empty])


@pytest.mark.slow
def test_evaluate_after_reading_sample_and_trec2_without_pandas(trec2_dir, tmp_path):
    sample = REPO / "pbtools" / "data" / "sample"
    forms = [["-q", "-m", "all_trec", "--trec"], ["-c", "-m", "P@10", "-m", "GMAP"], ["-q"]]
    _compare(tmp_path, [(sample / "QRels" / "qrels", sample / "Runs", forms)])
    qrels = next(p for p in sorted((trec2_dir / "QRels").iterdir()) if p.is_file())
    forms = [["--trec", "-q", "-m", "all_trec"], ["-c"]]
    _compare(tmp_path, [(qrels, trec2_dir / "Runs", forms)], lenient=True)
