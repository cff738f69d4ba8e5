"""pbtools.engine.build: the one builder of the leave-out variants and of R_p, checked against a
case small enough to compute by hand (and the two callers that use it: from_frames and the
leave-out experiments' EncodedPool)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pbtools.engine.build import (
    EncodedPool,
    PairSpec,
    from_frames,
    leave_out_labels,
    leave_out_variants,
    repool,
    unit_map,
)
from pbtools.engine.dense import DenseRuns, label_histograms
from pbtools.measures import parse_all

# four pooled runs of three organisations, two topics, pool depth 2 (the top 2 of each run):
#   topic 1: a1 x y | w   a2 y z   b1 z x | v   c1 v w
#   topic 2: a1 p       b1 p q
RANKINGS = {
    "a1": {"1": "xyw", "2": "p"},
    "a2": {"1": "yz"},
    "b1": {"1": "zxv", "2": "pq"},
    "c1": {"1": "vw"},
}
ORGS = pd.DataFrame({"name": ["a1", "a2", "b1", "c1"], "org": ["A", "A", "B", "C"]})
LABELS = {("1", "x"): 1, ("1", "y"): 0, ("1", "z"): 2, ("1", "v"): 1, ("1", "w"): 0}
LABELS |= {("1", "u"): 1, ("2", "p"): 1, ("2", "q"): 1}  # u: judged, in no run's top 2
DEPTH = 2

# who pooled what at depth 2: x by A and B, y by A only, z by A and B, v and w by C only;
# p by A and B, q by B only; u by nobody. The truth drops u; each unit's reduced qrels also
# drop the documents only that unit pooled.
TRUTH = {k: v for k, v in LABELS.items() if k != ("1", "u")}
REDUCED = {
    "A": {k: v for k, v in TRUTH.items() if k != ("1", "y")},
    "B": {k: v for k, v in TRUTH.items() if k != ("2", "q")},
    "C": {k: v for k, v in TRUTH.items() if k not in {("1", "v"), ("1", "w")}},
}
# label histograms (labels 0, 1, 2) per topic
HIST = {
    "A": [[1, 2, 1], [0, 2, 0]],
    "B": [[2, 2, 1], [0, 1, 0]],
    "C": [[1, 1, 1], [0, 2, 0]],
    "truth": [[2, 2, 1], [0, 2, 0]],
}
# R_p without the run's organisation (rp="org") or without the run itself (rp="run")
RP_ORG = {
    "a1": ["b1", "c1"],
    "a2": ["b1", "c1"],
    "b1": ["a1", "a2", "c1"],
    "c1": ["a1", "a2", "b1"],
}
RP_RUN = {n: [m for m in RANKINGS if m != n] for n in RANKINGS}


def runs() -> pd.DataFrame:
    rows = [
        (name, qid, doc, float(len(docs) - i))
        for name, topics in RANKINGS.items()
        for qid, docs in topics.items()
        for i, doc in enumerate(docs)
    ]
    return pd.DataFrame(rows, columns=["name", "qid", "docno", "score"])


def qrels() -> pd.DataFrame:
    rows = [(q, d, lab) for (q, d), lab in LABELS.items()]
    return pd.DataFrame(rows, columns=["qid", "docno", "label"])


def labels_of(enc: DenseRuns, lab: np.ndarray) -> dict:
    """``lab`` (T × U) as {(qid, docno): label} of its judged cells, the ids decoded."""
    q = qrels()
    t, x = enc.locate(q["qid"], q["docno"])
    got = {}
    for qid, doc, tt, xx in zip(q["qid"], q["docno"], t, x, strict=True):
        if lab[tt, xx] >= 0:
            got[(qid, doc)] = int(lab[tt, xx])
    assert (lab >= 0).sum() == len(got)  # no judged cell outside the qrels' documents
    return got


def encoded():
    from pbtools.frames import ranked

    enc = DenseRuns([ranked(runs())], [qrels()])
    lab, present, _ = enc.labels(qrels())
    return enc, lab[0], present[0]


def test_repool_keeps_the_labels_of_the_pooled_documents_only():
    enc, lab0, _ = encoded()
    assert labels_of(enc, repool(enc, enc.slots(0), DEPTH, lab0)) == TRUTH
    # depth 1: x, y, z, v on topic 1 and p on topic 2
    top1 = {k: v for k, v in TRUTH.items() if k[1] in "xyzvp"}
    assert labels_of(enc, repool(enc, enc.slots(0), 1, lab0)) == top1


def test_leave_out_labels_by_hand():
    enc, lab0, _ = encoded()
    units = unit_map(enc.names, "org", ORGS)
    names = pd.Index(["A", "B", "C"], dtype="str")
    code = names.get_indexer(pd.Index(units[enc.names].to_numpy(), dtype="str"))
    left_out = np.array([2, 0, 1])  # C, A, B: the variants follow this order
    lab, hist = leave_out_labels(enc, enc.slots(0), DEPTH, lab0, code, 3, left_out)
    assert lab.shape[0] == 4 and lab.dtype == lab0.dtype
    for v, unit in enumerate(["C", "A", "B"]):
        assert labels_of(enc, lab[v]) == REDUCED[unit], unit
        assert hist[v].tolist() == HIST[unit]
    assert labels_of(enc, lab[3]) == TRUTH
    assert hist[3].tolist() == HIST["truth"]
    assert np.array_equal(hist, label_histograms(lab))


def test_a_unit_without_pooled_runs_keeps_the_truth():
    enc, lab0, _ = encoded()
    code = np.array([0, 0, 1, 2])  # a1 a2 b1 c1 (slots in name order)
    lab, hist = leave_out_labels(enc, enc.slots(0), DEPTH, lab0, code, 4, np.array([3]))
    assert labels_of(enc, lab[0]) == TRUTH and labels_of(enc, lab[1]) == TRUTH
    assert hist[0].tolist() == HIST["truth"]


def test_pairspec_is_rp_by_hand():
    block = np.array([10, 11, 12, 13])  # a1 a2 b1 c1
    names = list(RANKINGS)
    orgs = dict(zip(ORGS["name"], ORGS["org"], strict=True))
    for keys, want in (([orgs[n] for n in names], RP_ORG), (names, RP_RUN)):
        spec = PairSpec.from_labels(keys, keys, block)
        pu, pp = spec.pairs(0, len(names))
        got: dict = {n: [] for n in names}
        for u, p in zip(pu, pp, strict=True):
            got[names[u]].append(names[p - 10])
        assert got == want
        lo, hi = spec.pairs(1, 3)  # a chunk of runs to score: the same rows
        whole = [(u, p) for u, p in zip(pu, pp, strict=True) if 1 <= u < 3]
        assert list(zip(lo, hi, strict=True)) == whole


@pytest.mark.parametrize("rp, want", [("org", RP_ORG), ("run", RP_RUN)])
def test_from_frames_builds_its_variants_and_rp_with_the_builder(rp, want):
    r = runs()
    pb = from_frames(r, r, qrels(), depth=DEPTH, orgs=ORGS, leave_out="org", rp=rp)
    assert pb.variants.tolist() == ["A", "B", "C", "\0truth"] and pb.truth_var == 3
    for v, unit in enumerate(["A", "B", "C"]):
        assert labels_of(pb.enc, pb.lab[v]) == REDUCED[unit]
        assert pb.hist[v].tolist() == HIST[unit]
    assert labels_of(pb.enc, pb.lab[3]) == TRUTH
    assert dict(zip(pb.names, pb.variants[pb.new_var], strict=True)) == dict(
        zip(ORGS["name"], ORGS["org"], strict=True)
    )
    names = np.asarray(pb.enc.names)
    got: dict = {n: [] for n in pb.names}
    for u, p in zip(pb.pair_u, pb.pair_p, strict=True):
        got[pb.names[u]].append(names[p])
    assert got == want


def test_from_frames_without_leave_out_scores_on_the_qrels_and_keeps_the_truth():
    r = runs()
    pb = from_frames(r[r["name"] != "c1"], r[r["name"] == "c1"], qrels(), depth=DEPTH)
    assert labels_of(pb.enc, pb.lab[0]) == LABELS
    # c1 is not pooled: v and w leave the truth
    assert labels_of(pb.enc, pb.lab[1]) == {
        k: v for k, v in TRUTH.items() if k not in {("1", "v"), ("1", "w")}
    }


def test_encoded_pool_truth_and_problem():
    enc, lab0, present = encoded()
    base = EncodedPool(enc, lab0, present, DEPTH, "judged", None)
    assert base.lab0.dtype == np.int8  # labels < 127: narrowed
    assert labels_of(enc, base.truth(enc.slots(0))) == TRUTH
    truth = base.truth(enc.slots(0))[None]
    pb = base.problem(enc.slots(0), truth, enc.slots(0), np.zeros(4, np.int64), 0)
    assert len(pb.pair_u) == 0 and pb.present.shape == (1, enc.T)
    # the runs on the truth: P@2 of a1 (x, y: 1 of 2 relevant) on topic 1 and (p) on topic 2
    p2 = pb.run_scores(pb.new, pb.new_var, parse_all(["P@2"]))[:, 0]
    assert p2.tolist() == [(0.5 + 0.5) / 2, 0.5, (1.0 + 1.0) / 2, 0.5]


def test_compact_variants_write_out_any_of_them():
    enc, lab0, _ = encoded()
    code = np.array([0, 0, 1, 2])  # a1 a2 b1 c1 (slots in name order): A A B C
    left_out = np.array([2, 0, 1])  # C, A, B
    lab, hist = leave_out_labels(enc, enc.slots(0), DEPTH, lab0, code, 3, left_out)
    v = leave_out_variants(enc, enc.slots(0), DEPTH, lab0, code, 3, left_out)
    assert np.array_equal(v.dense(), lab) and np.array_equal(v.hist, hist)
    # y (A), q (B), v and w (C): one removed cell each, the truth held once
    assert len(v.cells) == 4 and v.truth.shape == lab.shape[1:]
    for some in ([1], [2, 0], [0, 0], []):
        got = v.dense(np.array(some, np.int64))
        assert np.array_equal(got, lab[[*some, 3]]), some
        assert np.array_equal(v.histograms(np.array(some, np.int64)), hist[[*some, 3]])
    assert labels_of(enc, v.dense(np.array([1]))[0]) == REDUCED["A"]


def test_a_chunk_of_compact_variants_is_the_chunk_of_the_dense_problem():
    from pbtools.corrections.correct import run_estimators
    from pbtools.engine.chunks import sub_problem
    from pbtools.presets import resolve

    enc, lab0, present = encoded()
    base = EncodedPool(enc, lab0, present, DEPTH, "judged", None)
    slots, code = enc.slots(0), np.array([0, 0, 1, 2])
    v = leave_out_variants(enc, slots, DEPTH, base.lab0, code, 3, np.arange(3))
    dense = base.problem(slots, v.dense(), slots, code, 3)
    on_truth = base.problem(slots, v.truth[None], slots, np.zeros(4, np.int64), 0)
    spec = PairSpec(code, code, slots)  # R_p: the runs of the other organisations
    ms, opts = parse_all(["P@2", "AP"]), resolve(None)
    for lo, hi in ((0, 4), (1, 3)):
        a = sub_problem(dense, spec, lo, hi)
        b = sub_problem(on_truth, spec, lo, hi, variants=(v, code))
        assert b.lab.shape[0] == len(np.unique(code[lo:hi])) + 1  # its runs' variants, truth
        pd.testing.assert_frame_equal(
            run_estimators(a, ms, ["reduced", "webber", "lipani"], opts),
            run_estimators(b, ms, ["reduced", "webber", "lipani"], opts),
            check_exact=True,
        )
