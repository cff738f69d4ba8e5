"""The evaluation after the reading with fewer row-sized temporaries (issue 30, item 1): the
join's lookup and the order check a block of rows at a time, counts from their true rows
alone, one buffer for the rows' weights. Each is checked against the plain computation, with
blocks of a few rows that split the groups."""

import numpy as np
import pytest

from pbtools import joins
from pbtools.measures import arrays as A
from pbtools.measures import kernels as K
from pbtools.measures import parse_all
from pbtools.measures import segments as S
from pbtools.order import group_starts


def _rankings(seed: int, groups: int = 7, width: int = 9):
    """Rows of ``groups`` rankings of 0..width documents (some empty), sorted by group."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, width + 1, size=groups)
    g = np.repeat(np.arange(groups, dtype=np.int32), lengths)
    r = (np.arange(len(g)) - np.repeat(np.cumsum(lengths) - lengths, lengths) + 1).astype(np.int32)
    label = rng.integers(-1, 3, size=len(g)).astype(np.int32)
    return g, r, label, groups


@pytest.mark.parametrize("seed", range(6))
def test_counts_from_true_rows_match_a_running_count(seed):
    g, r, label, G = _rankings(seed)
    v = K.View(g, r, label, G)
    rel = label >= 1
    for n in (1, 3, 20, np.arange(G) % 4):  # one cut-off, or one per group (Rprec_mult)
        cut = np.minimum(v.length, n)
        want = [rel[s : s + c].sum() for s, c in zip(v.start, cut, strict=True)]
        assert v.upto(rel, n).tolist() == want
    nonrel = v.nonrel(1)
    assert v.cum_at(nonrel, rel).tolist() == v.cum(nonrel)[rel].tolist()
    assert v.cum_at(rel, rel).tolist() == v.cum(rel)[rel].tolist()
    assert v.cum_at(rel, ~rel).tolist() == v.cum(rel)[~rel].tolist()


@pytest.mark.parametrize("seed", range(4))
def test_starts_of_and_take_into_by_blocks(monkeypatch, seed):
    monkeypatch.setattr(S, "BLOCK_ROWS", 3)
    g, r, _, G = _rankings(seed)
    length = np.bincount(g, minlength=G)
    start, got = S.starts_of(g, G)
    assert got.tolist() == length.tolist()
    assert start.tolist() == (np.cumsum(length) - length).tolist()
    out = np.full(len(r), np.nan)
    table = np.log2(np.arange(1.0, 12.0))
    S.take_into(table, r, out)
    assert out.tolist() == table[r].tolist()


def test_one_buffer_for_the_rows_weights_holds_the_last_key():
    g, r, label, G = _rankings(3, groups=12)
    ms = parse_all(["AP", "nDCG", "Bpref(rel=2)", "AP@3", "nDCG@5", "Rprec", "P@2", "Bpref"])
    topics = K.Topics(np.arange(G).repeat(4), np.tile([0, 1, 2, 1], G), G)
    v = K.View(g, r, label, G)
    together, _ = K.score(v, topics, np.arange(G), ms)
    for j, m in enumerate(ms):  # each measure alone, on a view of its own
        alone, _ = K.score(K.View(g, r, label, G), topics, np.arange(G), [m])
        assert together[:, j].tolist() == alone[:, 0].tolist(), m
    calls = []
    a = v.rows_memo("a", lambda out: (calls.append("a"), out.fill(1.0)))
    assert v.rows_memo("a", lambda out: calls.append("again")) is a and calls == ["a"]
    b = v.rows_memo("b", lambda out: out.fill(2.0))
    assert b is a and b.tolist() == [2.0] * len(g)  # one buffer: "a" is gone
    assert v.rows_memo("a", lambda out: out.fill(1.0)).tolist() == [1.0] * len(g)


def _join_case(seed: int):
    rng = np.random.default_rng(seed)
    nq, nd, n = 4, 30, 60
    rq = np.sort(rng.integers(0, nq, n)).astype(np.int32)
    rd = rng.integers(0, nd, n).astype(np.int32)
    pairs = rng.choice(nq * nd, size=25, replace=False)
    qq, qd = (pairs // nd).astype(np.int64), (pairs % nd).astype(np.int64)
    qd[:2] = -1  # judgments of documents no run retrieves
    labels = rng.integers(-1, 3, size=len(pairs)).astype(np.int16)
    return [rq, rd], [qq, qd], labels, [nq, nd]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("direct", [True, False])
def test_judged_labels_by_blocks_both_forms(monkeypatch, seed, direct):
    run, qrels, labels, sizes = _join_case(seed)
    want_hit = np.zeros(len(run[0]), bool)
    want = np.zeros(len(run[0]), np.int16)
    for i, (q, d) in enumerate(zip(*run, strict=True)):
        at = np.flatnonzero((qrels[0] == q) & (qrels[1] == d))
        if len(at):
            want_hit[i], want[i] = True, labels[at[0]]
    monkeypatch.setattr(joins, "BLOCK_ROWS", 7)
    if not direct:  # a key space too large for a table: the binary search
        monkeypatch.setattr(np, "prod", lambda a, dtype=None: 1e12)
    lab, hit, dup = joins.judged_labels(run, qrels, labels, sizes)
    assert dup is None and hit.tolist() == want_hit.tolist() and lab.tolist() == want.tolist()
    qlab = A.kernel_labels(labels, np.ones(len(labels), bool))
    got, none, _ = joins.judged_labels(run, qrels, qlab, sizes, missing=K.UNJUDGED)
    assert none is None and got.dtype == qlab.dtype
    assert got.tolist() == A.kernel_labels(want, want_hit).tolist()


def test_judged_labels_finds_a_repeated_judgment_in_either_form():
    run = [np.array([0, 0]), np.array([0, 1])]
    qrels = [np.array([0, 0]), np.array([1, 1])]
    for missing in (None, -1):
        assert joins.judged_labels(run, qrels, np.array([1, 2]), [1, 2], missing=missing)[2] == 1


@pytest.mark.parametrize("seed", range(4))
def test_order_check_by_blocks_sees_every_boundary(monkeypatch, seed):
    monkeypatch.setattr(A, "BLOCK_ROWS", 2)
    g, r, _, G = _rankings(seed)
    score = -r.astype(np.float64)  # trec order inside every group
    doc = np.zeros(len(g), np.int64)
    start = group_starts(g)
    assert A._ordered(start, [g], [G], score, doc)
    for i in np.flatnonzero(~start):  # any one row out of order, wherever the blocks fall
        bad = score.copy()
        bad[i] = bad[i - 1] + 1.0
        assert not A._ordered(start, [g], [G], bad, doc)
        tie = score.copy()
        tie[i] = tie[i - 1]
        assert A._ordered(start, [g], [G], tie, np.where(np.arange(len(g)) < i, 1, 0))
        assert not A._ordered(start, [g], [G], tie, np.where(np.arange(len(g)) < i, 0, 1))


@pytest.mark.parametrize("seed", range(4))
def test_the_callers_places_are_checked_by_blocks(monkeypatch, seed):
    monkeypatch.setattr(A, "BLOCK_ROWS", 2)
    g, r, label, G = _rankings(seed)
    start = group_starts(g)
    assert A._places(start, r)
    ms = parse_all(["AP", "P@2", "RR"])
    args = ([], g, g, -r.astype(np.float64), np.zeros(len(g), np.int64), label, [])
    qrels = (np.arange(G).repeat(2), np.tile([1, 0], G), [], G, G)
    want, _ = A.Grouping(*args, *qrels).scores(ms)
    for i in range(len(g)):  # a wrong place anywhere: not taken, the places computed
        bad = r.copy()
        bad[i] += 1
        assert not A._places(start, bad)
        got, _ = A.Grouping(*args, *qrels, rank=bad).scores(ms)
        assert got.tolist() == want.tolist()
    got, _ = A.Grouping(*args, *qrels, rank=r).scores(ms)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("rows", [1, 2, 3])
def test_group_ids_by_blocks(monkeypatch, rows):
    monkeypatch.setattr(A, "BLOCK_ROWS", rows)
    rng = np.random.default_rng(rows)
    for n in (1, 2, 7, 40):
        for p in (0.0, 0.3, 1.0):
            start = rng.random(n) < p
            start[0] = True
            got = A._group_ids(start)
            assert got.dtype == np.int32 and got.tolist() == (np.cumsum(start) - 1).tolist()
