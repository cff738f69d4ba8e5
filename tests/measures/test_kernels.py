"""The scoring engine's two storage layouts (flat segments and dense matrices) agree exactly."""

import numpy as np
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtools.measures import kernels as K
from pbtools.measures import parse_all
from pbtools.measures import segments as S

MEASURES = parse_all(
    [
        "P@3",
        "AntiP@3",
        "Unjudged@4",
        "Judged@4",
        "R@5",
        "AP",
        "AP@3",
        "nDCG",
        "nDCG@3",
        "nDCG(rel=2)@5",
        "Bpref",
        "Rprec",
        "RR",
        "RR@2",
        "Success@2",
        "NumRet",
        "NumRelRet@3",
        "RBP(p=0.8)",
        "RBP(p=0.5)@3",
        "Q",
        "Q(beta=0.5)@4",
        "AP(judged_only=True)",
        "P(judged_only=True)@3",
        "nDCG(judged_only=True)@3",
    ]
)


def flat_view(labels: np.ndarray) -> K.View:
    keep = labels != K.PAD
    g, j = np.nonzero(keep)
    return K.View(g, j + 1, labels[g, j].astype(np.int64), len(labels))


@settings(max_examples=examples(80), deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 9),
    st.integers(0, 2**31 - 1),
)
def test_matrix_and_flat_layouts_agree(rows, width, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(-1, 3, size=(rows, width))
    lengths = rng.integers(0, width + 1, size=rows)
    labels[np.arange(width)[None, :] >= lengths[:, None]] = K.PAD
    hist = rng.integers(0, 4, size=(rows, 3))
    topics = K.Topics.from_hist(hist)
    gt = np.arange(rows)
    flat, fres = K.score(flat_view(labels), topics, gt, MEASURES)
    dense, dres = K.score(K.View.from_matrix(labels), topics, gt, MEASURES)
    np.testing.assert_allclose(dense, flat, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dres, fres, rtol=0, atol=1e-12, equal_nan=True)


def test_histogram_topics_equal_row_topics():
    t = np.array([0, 0, 0, 1, 1, 2])
    lab = np.array([2, 0, 1, -1, 1, 0])
    rows = K.Topics(t, lab, 3)
    assert rows.num_rel(1).tolist() == [2.0, 1.0, 0.0]
    assert rows.num_nonrel(1).tolist() == [1.0, 0.0, 1.0]
    assert rows.ideal_dcg(1, None)[0] == pytest.approx(2 + 1 / np.log2(3))
    same = K.Topics.from_hist(rows.hist)
    assert same.ideal_dcg(1, 1).tolist() == rows.ideal_dcg(1, 1).tolist()
    assert same.ideal_cg(1, np.array([0, 0]), np.array([1, 5])).tolist() == [2.0, 3.0]


@pytest.mark.parametrize("block", [3, 1 << 20])
def test_running_and_group_sums_equal_per_group_sums(monkeypatch, block):
    """The flat view's integer primitives — running counts (the group bases subtracted a block
    of rows at a time), sums up to a cut-off (one running sum) and over whole groups (one
    reduction) — equal a plain sum group by group, empty groups included."""
    monkeypatch.setattr(S, "BLOCK_ROWS", block)
    rng = np.random.default_rng(7)
    length = np.array([4, 0, 1, 7, 0, 3, 5])
    g = np.repeat(np.arange(len(length)), length)
    r = np.concatenate([np.arange(1, n + 1) for n in length])
    label = rng.integers(-1, 3, size=len(g))
    view = K.View(g, r, label, len(length))
    for x in (label >= 1, np.where(label > 0, label, 0)):
        starts = np.concatenate([[0], np.cumsum(length)[:-1]])
        running = np.concatenate(
            [np.cumsum(x[s : s + n]) for s, n in zip(starts, length, strict=True)]
        )
        assert view.cum(x).tolist() == running.tolist()
        for n in (None, 1, 3, 10):
            cut = length if n is None else np.minimum(length, n)
            want = [x[s : s + k].sum() for s, k in zip(starts, cut, strict=True)]
            got = view.upto(x, n)
            assert got.dtype == np.float64
            assert got.tolist() == [float(w) for w in want]


def test_segment_sums_and_subtract_gathered():
    x = np.array([True, False, True, True, True])
    start, length = np.array([0, 2, 2, 4]), np.array([2, 0, 2, 1])
    assert S.segment_sums(x, start, length, dtype=np.int64).tolist() == [1.0, 0.0, 2.0, 1.0]
    f = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    assert S.segment_sums(f, start, length).tolist() == [0.1 + 0.2, 0.0, 0.3 + 0.4, 0.5]
    out = np.arange(10, 17)
    idx = np.array([0, 1, 1, 2, 0, 2, 1])
    want = out - np.array([1, 2, 3])[idx]
    S.subtract_gathered(out, np.array([1, 2, 3]), idx)
    assert out.tolist() == want.tolist()
