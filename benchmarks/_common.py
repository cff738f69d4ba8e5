"""What the paper-reproduction scripts share: finding and loading tracks, the synthetic stand-in.

Each script reproduces a paper "over any directory of TREC tracks": ``ROOT`` is a track
(``TRACK/{QRels/,Runs/,desc.xml}``), or a directory of them (``ROOT/<TREC-N>/<Track>/``, as in
``../shared/data/trec``), or ``--synthetic`` for a :mod:`pbtools.synth` collection with complete
judgments.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from pbtools import inference, io  # noqa: E402
from pbtools.frames import TrecFormatWarning  # noqa: E402

#: the synthetic collection the scripts use with ``--synthetic`` (pbtools.synth.generate)
SYNTHETIC = dict(topics=50, docs=1500, runs=30, orgs=15, run_length=500, depth=50)


@dataclass
class Track:
    """One collection: frames plus the inferred (real) or known (synthetic) pool."""

    name: str
    runs: pd.DataFrame
    qrels: pd.DataFrame
    orgs: pd.DataFrame
    pooled: list[str]
    depth: int
    truth: pd.DataFrame | None = None  # complete judgments (synthetic collections only)


def load_tracks(root=None, *, synthetic: bool = False, lenient: bool = True, seed: int = 0,
                infer: bool = True, quiet: bool = False) -> list[Track]:
    """Every track under ``root`` (:func:`pbtools.io.find_tracks`), or one synthetic collection.

    Real tracks are read leniently by default (TREC archives are dirty; the number of repairs is
    printed unless ``quiet``) and their pool is inferred (:func:`pbtools.inference.infer_pool`)
    when ``infer``. The track name is its path below ``root``, or ``<parent>/<track>`` when ``root`` is the
    track (``TREC-2/Adhoc`` either way).
    """
    if synthetic:
        from pbtools import synth

        col = synth.generate(**SYNTHETIC, seed=seed)
        return [Track("synthetic", col.runs, col.qrels, col.orgs, sorted(col.pooled),
                      int(col.depth), col.truth)]
    if root is None:
        raise ValueError("give a ROOT directory of tracks, or --synthetic")
    root_p = Path(root)
    out = []
    for t in io.find_tracks(root_p):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrecFormatWarning)
            col = io.read_collection(t, lenient=lenient)
        if len(col.repairs) and not quiet:
            print(f"{t}: {len(col.repairs)} lenient repairs of the input", file=sys.stderr)
        for f in (col.runs, col.qrels, col.orgs):
            f.attrs.clear()
        pooled, depth = [], 0
        if infer:
            info = inference.infer_pool(col.runs, col.qrels)
            pooled, depth = sorted(map(str, info.pooled_runs)), int(info.depth)
        name = (str(t.relative_to(root_p)) if t != root_p
                else f"{root_p.resolve().parent.name}/{root_p.resolve().name}")
        out.append(Track(name, col.runs, col.qrels, col.orgs, pooled, depth))
    return out
