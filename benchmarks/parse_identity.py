"""``read_runs`` of this checkout against another (the code before a change): the same frames.

``python benchmarks/parse_identity.py --before CHECKOUT [--cases a,b,...]`` reads each case in
a fresh process of ``CHECKOUT`` (its code first on ``sys.path``), pickles the frame and its
repairs, and compares them with this checkout's: ``assert_frame_equal(check_exact=True)``, the
categories and codes of ``name``, ``qid`` and ``docno``, and the repairs frame (lenient). A
refusal (strict) must be the same message in both. Cases (issue 30): TREC-2 lenient under both
``run_id`` modes, TOY (``../shared``), the bundled sample, the MS MARCO-like shape at 1 M and
3.5 M rows, synth127, synth129 and synth63 (``benchmarks/shapes.py``). Prints one line per
case and exits 1 when any differs. ``--pure`` reads the other side with ``PBTOOLS_PURE=1``
(pyarrow alone, not the C tokenizer); ``--pure`` without ``--before``: this checkout with and
without its compiled tokenizer.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (HERE, ROOT):  # run as a script from anywhere
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

_READ = """
import pickle, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
from pbtools.io import read_runs
out, lenient, run_id, paths = sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5:]
try:
    got = read_runs(paths, lenient=lenient, run_id=run_id)
except Exception as e:
    got = f"{type(e).__name__}: {e}"
with open(out, "wb") as f:
    pickle.dump(got, f)
"""


def cases() -> dict[str, tuple[Path | None, bool, str]]:
    """``{name: (track directory or None when absent, lenient, run_id)}``."""
    from shapes import msmarco, synth63, synth127, synth129, trec2

    toy = ROOT.parent / "shared" / "data" / "trec" / "TOY"
    return {
        "trec2-tag": (trec2(), True, "tag"),
        "trec2-file": (trec2(), True, "file"),
        "toy": (toy if toy.is_dir() else None, False, "tag"),
        "sample": (ROOT / "pbtools" / "data" / "sample", False, "tag"),
        "msmarco-1M": (msmarco(200), False, "tag"),
        "msmarco-3.5M": (msmarco(698), False, "tag"),
        "synth127": (synth127(), False, "tag"),
        "synth129": (synth129(), False, "tag"),
        "synth63": (synth63(), False, "tag"),
    }


def read(root: Path, paths: list[str], lenient: bool, run_id: str, pure: bool = False):
    """``read_runs`` of the checkout ``root`` in a fresh process (a frame, or the refusal);
    ``pure``: with ``PBTOOLS_PURE=1`` (no compiled tokenizer)."""
    env = dict(os.environ, PBTOOLS_PURE="1") if pure else None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "frame.pickle"
        subprocess.run(
            [sys.executable, "-c", _READ, str(root), str(out), str(int(lenient)), run_id, *paths],
            check=True,
            cwd=str(root),
            env=env,
        )
        with open(out, "rb") as f:
            return pickle.load(f)


def differences(a, b) -> str | None:
    """What differs between two results of ``read_runs`` (None: identical)."""
    if isinstance(a, str) or isinstance(b, str):
        return None if a == b else f"{a!r} against {b!r}"
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        for c in ("name", "qid", "docno"):
            if not a[c].cat.categories.equals(b[c].cat.categories):
                return f"{c}: categories differ"
            if not (a[c].cat.codes.to_numpy() == b[c].cat.codes.to_numpy()).all():
                return f"{c}: codes differ"
        ra, rb = a.attrs.get("repairs"), b.attrs.get("repairs")
        if (ra is None) != (rb is None):
            return "repairs: one side has none"
        if ra is not None:
            pd.testing.assert_frame_equal(ra, rb, check_exact=True)
    except AssertionError as e:
        return str(e).splitlines()[0]
    return None


def main(argv: list[str] | None = None) -> int:
    from pbtools.io import run_files

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, metavar="CHECKOUT")
    ap.add_argument("--pure", action="store_true", help="the other side with PBTOOLS_PURE=1")
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    args = ap.parse_args(argv)
    if args.before is None and not args.pure:
        ap.error("give --before CHECKOUT, --pure, or both")
    before = ROOT if args.before is None else args.before
    warnings.simplefilter("ignore")
    table = cases()
    names = args.cases.split(",") if args.cases else list(table)
    bad = 0
    for name in names:
        track, lenient, run_id = table[name]
        if track is None:
            print(f"{name:14s} skipped (not in ../shared)")
            continue
        paths = [str(p) for p in run_files(track / "Runs")]
        diff = differences(
            read(ROOT, paths, lenient, run_id),
            read(before, paths, lenient, run_id, pure=args.pure),
        )
        bad += diff is not None
        print(f"{name:14s} {'identical' if diff is None else 'DIFFERS: ' + diff}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
