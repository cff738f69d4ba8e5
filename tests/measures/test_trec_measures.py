"""The rest of trec_eval's all_trec: both storage layouts agree, identities between measures,
small rankings worked by hand (the conformance files check them against trec_eval itself)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtools import measures as M
from pbtools.measures import kernels as K
from pbtools.measures import parse_all

NEW = parse_all(
    [
        "GMAP",
        "GMBpref",
        "IPrec@0",
        "IPrec@0.3",
        "IPrec@1",
        "IAP",
        "IAP(recall=[0.25,0.5])",
        "Rprec(mult=0.2)",
        "Rprec(mult=1.6)",
        "P(relative=True)@3",
        "SetP",
        "SetP(relative=True)",
        "SetR",
        "SetF",
        "SetF(beta=0.5)",
        "SetAP",
        "Utility",
        "Utility(a=2,c=-1,d=0.5,docs=40)",
        "BinG",
        "G",
        "G(gains={1:0.5,2:4})",
        "nDCG(gains={0:-1,1:3,2:3})",
        "nDCGRel",
        "RnDCG",
        "RnDCG(gains={1:2,2:2})",
        "NumNonRelRet@4",
        "Unjudged(padded=False)@4",
        "RBP(p=0.9,graded=True)",
        "RBPResid(p=0.9)",
        "IPrec(judged_only=True)@0.5",
    ]
)


def flat_view(labels: np.ndarray) -> K.View:
    keep = labels != K.PAD
    g, j = np.nonzero(keep)
    return K.View(g, j + 1, labels[g, j].astype(np.int64), len(labels))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 9), st.integers(0, 2**31 - 1))
def test_matrix_and_flat_layouts_agree(rows, width, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(-1, 3, size=(rows, width))
    lengths = rng.integers(0, width + 1, size=rows)
    labels[np.arange(width)[None, :] >= lengths[:, None]] = K.PAD
    topics = K.Topics.from_hist(rng.integers(0, 4, size=(rows, 3)))
    gt = np.arange(rows)
    flat, _ = K.score(flat_view(labels), topics, gt, NEW)
    dense, _ = K.score(K.View.from_matrix(labels), topics, gt, NEW)
    np.testing.assert_allclose(dense, flat, rtol=0, atol=1e-12)
    texts_flat, texts_dense = {}, {}
    rs = parse_all(["Relstring@5"])
    K.score(flat_view(labels), topics, gt, rs, texts=texts_flat)
    K.score(K.View.from_matrix(labels), topics, gt, rs, texts=texts_dense)
    assert texts_flat[0].tolist() == texts_dense[0].tolist()


@pytest.fixture(scope="module")
def small():
    """Two topics, three runs, graded labels, unjudged documents, one short ranking."""
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(30)]
    qrels = pd.DataFrame(
        {
            "qid": np.repeat(["1", "2"], 20),
            "docno": docs[:20] * 2,
            "label": rng.integers(0, 4, 40),
        }
    )
    rows = []
    for name, n in (("a", 25), ("b", 12), ("c", 4)):
        for qid in ("1", "2"):
            for r, d in enumerate(rng.permutation(docs)[:n]):
                rows.append((name, qid, d, float(n - r)))
    runs = pd.DataFrame(rows, columns=["name", "qid", "docno", "score"])
    return runs, qrels


def _values(runs, qrels, names):
    pt = M.evaluate(runs, qrels, names, per_topic=True, warn=False)
    return pt.pivot_table(index=["name", "qid"], columns="measure", values="value", observed=True)


def test_identities(small):
    runs, qrels = small
    v = _values(
        runs,
        qrels,
        ["Rprec", "Rprec(mult=1)", "SetP", "SetR", "SetAP", "IAP", "AP", "GMAP"]
        + [f"IPrec@{x / 10:g}" for x in range(11)]
        + ["nDCG", "nDCG(gains={1:1,2:2,3:3})", "SetF(beta=0)", "Bpref", "GMBpref"],
    )
    assert "Rprec(mult=1)" not in v.columns  # the default multiple is Rprec itself
    np.testing.assert_allclose(v["SetAP"], v["SetP"] * v["SetR"], atol=1e-15)
    iprec = v[[f"IPrec@{x / 10:g}" for x in range(11)]].to_numpy()
    np.testing.assert_allclose(v["IAP"], iprec.mean(axis=1), atol=1e-12)
    assert (np.diff(iprec, axis=1) <= 0).all()  # interpolated precision never increases
    np.testing.assert_array_equal(v["nDCG"], v["nDCG(gains={1:1,2:2,3:3})"])
    np.testing.assert_allclose(v["SetF(beta=0)"], v["SetP"], atol=1e-15)  # beta = 0: precision
    np.testing.assert_array_equal(v["GMAP"], v["AP"])  # per topic AP; the mean is geometric
    np.testing.assert_array_equal(v["GMBpref"], v["Bpref"])


def test_hand_worked_ranking():
    """Ranking r, n, r, u (u not in the qrels), R = 3 (one relevant document unretrieved)."""
    runs = pd.DataFrame({"name": "x", "qid": "1", "docno": list("abcd"), "score": [4.0, 3, 2, 1]})
    qrels = pd.DataFrame({"qid": "1", "docno": list("abce"), "label": [1, 0, 1, 1]})
    v = _values(
        runs,
        qrels,
        [
            "IPrec@0.5",
            "IPrec@1",
            "Rprec(mult=0.5)",
            "P(relative=True)@4",
            "SetF",
            "Utility",
            "BinG",
            "NumNonRelRet",
            "Unjudged(padded=False)@8",
            "Unjudged@8",
        ],
    ).iloc[0]
    assert v["IPrec@0.5"] == pytest.approx(2 / 3)  # c = lround(1.5) = 2: the best P from rank 3
    assert v["IPrec@1"] == 0.0  # 3 relevant never reached
    assert v["Rprec(mult=0.5)"] == pytest.approx(1 / 2)  # ⌊0.5·3 + 0.9⌋ = 2: P@2
    assert v["P(relative=True)@4"] == pytest.approx(2 / 3)  # 2 ÷ min(4, R)
    p, r = 2 / 4, 2 / 3
    assert v["SetF"] == pytest.approx(2 * p * r / (p + r))
    assert v["Utility"] == 2 - 2  # a·2 + b·(4 − 2)
    assert v["BinG"] == pytest.approx((1 / np.log2(2) + 1 / np.log2(3)) / 3)
    assert v["NumNonRelRet"] == 1
    assert v["Unjudged(padded=False)@8"] == pytest.approx(1 / 8)  # trec_eval unj
    assert v["Unjudged@8"] == pytest.approx(5 / 8)  # pbtools: ranks past the end unjudged


def test_geometric_and_string_measures_average_as_trec_eval(small):
    runs, qrels = small
    pt = M.evaluate(runs, qrels, ["AP", "GMAP", "Relstring@5"], per_topic=True, warn=False)
    assert pt[pt["measure"] == "Relstring@5"]["text"].str.len().max() == 5
    avg = M.aggregate(pt).pivot_table(index="name", columns="measure", values="value")
    ap = pt[pt["measure"] == "AP"].groupby(pt["name"].astype(str), observed=True)["value"]
    gm = ap.apply(lambda s: np.exp(np.log(np.maximum(s, 1e-5)).mean()))
    np.testing.assert_allclose(avg["GMAP"].to_numpy(), gm.to_numpy(), rtol=1e-12)
    assert "Relstring@5" not in avg.columns
