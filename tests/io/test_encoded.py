"""EncodedRuns / EncodedQrels: the reader's frames to codes and back without a change."""

import glob

import pandas as pd
import pytest

from pbtools import io
from pbtools.io.encoded import EncodedQrels, EncodedRuns


@pytest.fixture(scope="module")
def sample():
    from pathlib import Path

    root = Path(io.__file__).parent.parent / "data" / "sample"
    runs = io.read_runs(sorted(glob.glob(str(root / "Runs" / "*"))))
    qrels = io.read_qrels(root / "QRels" / "qrels")
    return runs, qrels


def test_runs_round_trip(sample):
    runs, _ = sample
    e = EncodedRuns.from_frame(runs)
    assert len(e) == len(runs)
    back = e.frame()
    pd.testing.assert_frame_equal(back, runs, check_exact=True)
    for c in ("name", "qid", "docno"):
        assert back[c].cat.codes.tolist() == runs[c].cat.codes.tolist()


def test_qrels_round_trip(sample):
    _, qrels = sample
    e = EncodedQrels.from_frame(qrels)
    pd.testing.assert_frame_equal(e.frame(), qrels, check_exact=True)
    assert e.qids.to_pylist() == qrels["qid"].cat.categories.tolist()
