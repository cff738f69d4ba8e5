"""What ``nDCG(rel=…)`` means, against trec_eval with and without ``-l``.

trec_eval's ``-l2`` makes labels below 2 non-relevant for the binary measures but leaves ndcg
alone (m_ndcg.c takes its gains from every positive label). trec_eval's own regression output
``out.test.aql`` is ``-m all_trec -mrelstring.20 -q -l2`` on ``qrels.rel_level``; the values
without ``-l`` below were printed by trec_eval 9 (pytrec_eval-terrier 0.5.11, whose
``relevance_level=1`` and ``=2`` give the same ndcg and differ in P_10 only on topic 301).
"""

from pathlib import Path

import pandas as pd
import pytest

from pbtools import frames
from pbtools import measures as M

#: trec_eval without -l on results.test / qrels.rel_level: (ndcg, ndcg_cut_10, P_10) per topic
NO_L = {"301": (0.1396, 0.0439, 0.2), "302": (0.6617, 0.7530, 0.7), "303": (0.3669, 0.0, 0.0)}


def test_ndcg_rel_by_hand():
    """Run a b c with labels 1, 2, 0; the qrels also hold d (3). nDCG: gains 1 2 0 against the
    ideal 3 2 1. nDCG(rel=2): a gains 0 in the run and leaves the ideal, now 3 2."""
    runs = frames.as_run(
        pd.DataFrame({"name": "r", "qid": "1", "docno": list("abc"), "score": [3.0, 2.0, 1.0]})
    )
    qrels = frames.as_qrels(
        pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": [1, 2, 0, 3]})
    )
    v = M.evaluate(runs, qrels, ["nDCG", "nDCG(rel=2)"]).set_index("measure")["value"]
    import math

    l2 = math.log2
    assert v["nDCG"] == pytest.approx((1 + 2 / l2(3)) / (3 + 2 / l2(3) + 1 / l2(4)), abs=1e-15)
    assert v["nDCG(rel=2)"] == pytest.approx((2 / l2(3)) / (3 + 2 / l2(3)), abs=1e-15)


def test_trec_name_does_not_claim_ndcg():
    assert M.parse("nDCG(rel=2)").trec_name == "nDCG(rel=2)"
    assert M.parse("nDCG").trec_name == "ndcg"
    assert M.parse("P(rel=2)@10").trec_name == "P_10"


@pytest.fixture(scope="module")
def rel_level(shared_dir: Path):
    conf = shared_dir / "data" / "trec_eval_conformance"
    if not (conf / "out.test.aql").is_file():
        pytest.skip(f"{conf} lacks out.test.aql")
    rows = [ln.split()[:6] for ln in (conf / "results.test").read_text().splitlines()]
    run = pd.DataFrame(rows, columns=["qid", "q0", "docno", "rank", "score", "name"])
    qrels = pd.read_csv(
        conf / "qrels.rel_level",
        sep=r"\s+",
        header=None,
        names=["qid", "it", "docno", "label"],
        dtype={"qid": str, "docno": str},
    )
    out = pd.read_csv(
        conf / "out.test.aql", sep="\t", header=None, names=["m", "qid", "v"], dtype=str
    )
    out["m"] = out["m"].str.strip()
    aql = {(m, str(q)): v for m, q, v in out.itertuples(index=False)}
    pt = M.evaluate(
        frames.as_run(run[["name", "qid", "docno", "score"]]),
        frames.as_qrels(qrels[["qid", "docno", "label"]]),
        ["nDCG", "nDCG@10", "nDCG(rel=2)", "nDCG(rel=2)@10", "P@10", "P(rel=2)@10"],
        per_topic=True,
    )
    ours = {(str(m), str(q)): v for m, q, v in pt[["measure", "qid", "value"]].itertuples(False)}
    return aql, ours


@pytest.mark.shared
def test_trec_eval_ndcg_ignores_l(rel_level):
    aql, ours = rel_level
    for qid, (ndcg, cut10, p10) in NO_L.items():
        # trec_eval's ndcg is the same with -l2 (out.test.aql) and without -l (NO_L) ...
        assert aql[("ndcg", qid)] == f"{ndcg:.4f}"
        assert aql[("ndcg_cut_10", qid)] == f"{cut10:.4f}"
        # ... and it is pbtools' nDCG with the default rel=1
        assert f"{ours[('nDCG', qid)]:.4f}" == f"{ndcg:.4f}"
        assert f"{ours[('nDCG@10', qid)]:.4f}" == f"{cut10:.4f}"
        # P@10 does follow -l: P(rel=2)@10 is -l2's P_10, P@10 the one without -l
        assert f"{ours[('P(rel=2)@10', qid)]:.4f}" == aql[("P_10", qid)]
        assert f"{ours[('P@10', qid)]:.4f}" == f"{p10:.4f}"
    # nDCG(rel=2) is a different measure: no trec_eval run gives it
    assert f"{ours[('nDCG(rel=2)', '301')]:.4f}" == "0.0288" != aql[("ndcg", "301")]
    assert f"{ours[('nDCG(rel=2)@10', '303')]:.4f}" == "0.0000"
    assert aql[("P_10", "301")] != f"{NO_L['301'][2]:.4f}"  # -l2 changed P_10 on topic 301


def test_ndcg_rel_and_rndcg_take_ndcg_s_dcg_terms():
    """One DCG: nDCGRel's and RnDCG's terms are nDCG's (the same array), with and without
    gains, on the flat and the matrix layouts."""
    import numpy as np

    from pbtools.measures.formulas import dcg_terms
    from pbtools.measures.formulas_trec import _dcg_terms
    from pbtools.measures.kernels import Topics, View

    topics = Topics(np.zeros(3, int), np.array([1, 2, 0]), 1)
    flat = View(np.zeros(4, int), np.arange(1, 5), np.array([2, -1, 0, 1]), 1)
    matrix = View.from_matrix(np.array([[2, -1, 0, 1]]))
    for v in (flat, matrix):
        for m in (M.parse("nDCG"), M.parse("nDCG(gains={1:3,2:9})")):
            g, w = _dcg_terms(v, topics, m)
            assert w is dcg_terms(v, topics, m)
            assert (np.ravel(g) > 0).tolist() == [True, False, False, True]
