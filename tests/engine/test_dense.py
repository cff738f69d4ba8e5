"""The dense layout (pbtools.engine.dense) and the label cells the engine scores
(Problem.cell_labels), by hand and against their slow paths."""

import numpy as np
import pandas as pd
import pytest

from pbtools import synth
from pbtools.engine import dense, histograms
from pbtools.engine.dense import DenseRuns
from pbtools.engine.problem import Problem
from pbtools.frames import as_qrels, ranked
from pbtools.measures import kernels as K
from pbtools.measures import parse_all


def run(name, docs, qid="1"):
    """A ranked run of ``docs`` (one character each) on one topic."""
    n = len(docs)
    return pd.DataFrame(
        {
            "name": [name] * n,
            "qid": [qid] * n,
            "docno": list(docs),
            "score": -np.arange(n, dtype=float),
        }
    )


def test_encoding_by_hand():
    a = ranked(pd.concat([run("p1", "abc"), run("p2", "ca", qid="2")]))
    b = ranked(run("u", "xb"))
    q = as_qrels(pd.DataFrame({"qid": ["1", "1"], "docno": ["q", "a"], "label": [1, 0]}))
    enc = DenseRuns([a, b], [q])
    # documents: the first frame's dictionary, then the new ids in order of appearance
    assert enc.docs.tolist() == ["a", "b", "c", "x", "q"]
    assert enc.names.tolist() == ["p1", "p2", "u"]
    assert enc.length.tolist() == [[3, 0], [0, 2], [2, 0]]
    x = enc.locate(pd.Series(["1", "1", "1", "1", "2"]), pd.Series(list("abcqa")))[1]
    assert enc.rank(0, 0, x[:4]).tolist() == [1, 2, 3, 0]
    # the padding doc −1 (and any negative doc) has rank 0, whatever the table holds
    assert enc.rank(np.array([[0], [2]]), 0, np.array([[-1, x[1]], [x[1], -5]])).tolist() == [
        [0, 2],
        [2, 0],
    ]
    assert enc.rank(1, 1, x[4]) == 2


def test_rank_table_and_sorted_keys_agree(monkeypatch):
    c = synth.generate(topics=4, docs=60, runs=5, orgs=3, run_length=25, depth=5, seed=3)
    runs = ranked(c.runs)
    table = DenseRuns([runs], [c.qrels])
    monkeypatch.setattr(dense, "RANK_TABLE_BYTES", 0)
    keys = DenseRuns([runs], [c.qrels])
    assert table.RK is not None and keys.RK is None
    rng = np.random.default_rng(0)
    r = rng.integers(0, table.R, (200, 1))
    t = rng.integers(0, table.T, (200, 1))
    x = rng.integers(-3, table.U, (200, 30))
    got = table.rank(r, t, x)
    assert got.dtype == np.int32 and got.tolist() == keys.rank(r, t, x).tolist()
    assert (got[x < 0] == 0).all() and (got > 0).any()
    for slot in range(table.R):  # every ranked document has its rank
        for topic in range(table.T):
            docs = table.D[slot, topic, : table.length[slot, topic]]
            assert table.rank(slot, topic, docs).tolist() == list(range(1, len(docs) + 1))


@pytest.mark.parametrize("top", [3, 200])
def test_cell_labels_pad_and_narrow_dtype(top):
    lab = np.array([[[1, -1, 0, top]], [[0, 0, -1, 1]]], dtype=np.int16)  # V=2, T=1, U=4
    p = Problem(
        enc=None,
        pooled=np.zeros(0, np.int64),
        depth=1,
        lab=lab,
        present=np.ones((2, 1), bool),
        variants=pd.Index(["a", "b"]),
        new=np.zeros(0, np.int64),
        new_var=np.zeros(0, np.int64),
        pair_u=np.zeros(0, np.int64),
        pair_p=np.zeros(0, np.int64),
    )
    docs = np.array([[3, 0, -1], [0, 2, 1], [-1, -1, -1]], dtype=np.int32)
    got = p.cell_labels(docs, np.array([0, 1, 1]), np.array([0, 0, 0]))
    pad = K.PAD
    assert got.tolist() == [[top, 1, pad], [0, -1, 0], [pad, pad, pad]]
    assert got.dtype == (np.int8 if top < 128 else np.int16)
    p.lab = lab[::-1].copy()  # a replaced label array is read afresh
    assert p.cell_labels(docs[:1], np.array([1]), np.array([0])).tolist() == [[top, 1, pad]]


def test_matrix_view_scores_do_not_depend_on_dtype_or_layout():
    ms = parse_all(
        ["P@5", "AntiP@5", "P@30", "AP@30", "nDCG@10", "RBP(p=0.8)@30", "Judged@10", "Q"]
    )
    rng = np.random.default_rng(7)
    labels = rng.integers(-1, 3, size=(50, 40))
    labels[np.arange(40)[None, :] >= rng.integers(0, 41, size=50)[:, None]] = K.PAD
    topics = K.Topics.from_hist(rng.integers(0, 9, size=(50, 3)))
    ref = K.score(K.MatrixView(labels), topics, np.arange(50), ms)
    for dt in (np.int8, np.int16, np.int32):
        for lay in (np.ascontiguousarray, np.asfortranarray):
            got = K.score(K.MatrixView(lay(labels.astype(dt))), topics, np.arange(50), ms)
            assert np.array_equal(got[0], ref[0])
            assert np.array_equal(got[1], ref[1], equal_nan=True)


def test_score_cells_with_a_table_of_relevance_sets_equals_per_row_sets():
    ms = parse_all(["P@3", "AntiP@3", "AP", "nDCG@4", "R@5", "Bpref", "RBP(p=0.5)"])
    rng = np.random.default_rng(3)
    labels = rng.integers(-1, 3, size=(40, 6)).astype(np.int8)
    labels[np.arange(6)[None, :] >= rng.integers(0, 7, size=40)[:, None]] = K.PAD
    table = rng.integers(0, 9, size=(7, 3))
    topic = rng.integers(0, 7, size=40)
    p = Problem(*[None] * 10)
    rows = p.score_cells(labels, table[topic], ms)
    assert np.array_equal(p.score_cells(labels, table, ms, topic=topic), rows)
    assert rows.shape == (40, len(ms)) and (rows[:, 0] > 0).any()


def test_variant_histograms_are_the_label_histograms_of_the_variants():
    from pbtools.engine.dense import label_histograms, variant_histograms

    rng = np.random.default_rng(7)
    base = rng.choice(np.array([-1, -1, 0, 0, 1, 2], np.int8), size=(6, 40))
    V = 5
    pick = rng.choice((V - 1) * base.size, 90, replace=False)  # distinct (variant, cell)
    var, cells = pick // base.size, pick % base.size  # the last variant keeps every label
    lab = np.repeat(base[None], V, axis=0)
    lab.reshape(V, -1)[var, cells] = -1
    got = variant_histograms(base, var, cells, V)
    assert got.shape == (V, 6, 3)
    np.testing.assert_array_equal(got, label_histograms(lab))


def test_top_counts_dense_and_sparse_agree():
    # both paths of DenseRuns.top_counts against a direct count of every run's top d
    c = synth.generate(topics=4, docs=40, runs=7, orgs=3, run_length=25, depth=10, seed=2)
    enc = DenseRuns([c.runs], [c.qrels])
    S = np.arange(enc.R)
    groups = np.array([0, 2, 1, 0, 2, 2, 1])
    for d in (1, 5, 25):  # sparse for small d, dense for large d (cells vs entries)
        want = np.zeros((3, enc.T, enc.U), dtype=np.int64)
        for s, g in zip(S, groups, strict=True):  # a handful of runs
            docs = enc.D[s, :, :d]
            t, j = np.nonzero(docs >= 0)
            want[g, t, docs[t, j]] += 1
        np.testing.assert_array_equal(enc.top_counts(S, d, groups=groups, n_groups=3), want)
        np.testing.assert_array_equal(enc.top_counts(S, d), want.sum(axis=0))


@pytest.mark.parametrize("table_cells", [histograms.PRESENCE_CELLS, -(10**9)])
def test_top_owners_table_and_sort_agree_with_top_counts(table_cells, monkeypatch):
    # both paths of DenseRuns.top_owners (a presence table; sorted keys) against its
    # definition: how many groups pooled each doc (top_counts > 0) and the only one
    monkeypatch.setattr(histograms, "PRESENCE_CELLS", table_cells)
    c = synth.generate(topics=4, docs=40, runs=7, orgs=3, run_length=25, depth=10, seed=2)
    enc = DenseRuns([c.runs], [c.qrels])
    S, groups = np.arange(1, enc.R), np.array([0, 2, 1, 0, 4, 2])  # group 3 pools nothing
    for d in (1, 5, 25):
        has = enc.top_counts(S, d, groups=groups, n_groups=5) > 0
        count, owner = enc.top_owners(S, d, groups, 5)
        np.testing.assert_array_equal(count, has.sum(axis=0))
        np.testing.assert_array_equal(owner, np.where(count == 1, has.argmax(axis=0), -1))
        assert (count == 1).any() and (count > 1).any()


def _rankings(enc, slots):
    """Each slot's rankings as (name, topic id, rank, global docno), from the encoding."""
    rows = []
    for s in slots:
        for t in range(enc.T):
            for i in range(int(enc.length[s, t])):
                x = int(enc.D[s, t, i])
                g = int(enc.universe[enc.tstart[t] + x] % enc.NG)
                rows.append((enc.names[s], enc.qids[t], i + 1, enc.docs[g]))
    return sorted(rows)


def test_extended_adds_runs_without_moving_the_encoding():
    # DenseRuns.extended (a fitted pool's predict): the pool's slots, topics and local ids stay;
    # the added runs read back as they were given, documents new to a topic (known elsewhere
    # or nowhere) included, a longer ranking widening L; the pool itself is left unchanged
    c = synth.generate(topics=4, docs=40, runs=5, orgs=3, run_length=20, depth=10, seed=4)
    runs = c.runs.assign(docno=c.runs["docno"].astype(str), qid=c.runs["qid"].astype(str))
    pool = DenseRuns([runs], [c.qrels])
    before = (pool.D.copy(), pool.RK.copy(), pool.universe.copy(), pool.L, pool.U)
    u = runs[runs["name"] == "o01r1"].assign(name="u")
    on_001 = set(u.loc[u["qid"] == "001", "docno"])  # documents known, not all on topic 001
    other = [d for d in runs[runs["qid"] != "001"]["docno"].unique() if d not in on_001][:5]
    extra = pd.DataFrame(
        {"name": "u", "qid": "001", "docno": [*other, "zz1", "zz2"], "rank": range(21, 28)}
    )
    u = pd.concat([u[["name", "qid", "docno", "rank"]], extra], ignore_index=True)
    ext = pool.extended([u])
    assert ext.L == 27 and ext.R == pool.R + 1
    np.testing.assert_array_equal(ext.D[: pool.R, :, : pool.L], before[0])
    assert (ext.D[: pool.R, :, pool.L :] == -1).all()
    np.testing.assert_array_equal(ext.RK[: pool.R, :, : pool.U + 1], before[1])
    assert _rankings(ext, ext.slots(1)) == sorted(
        (n, q, int(r), d) for n, q, r, d in u[["name", "qid", "rank", "docno"]].to_numpy()
    )
    assert _rankings(ext, ext.slots(0)) == _rankings(pool, pool.slots(0))
    s = ext.slots(1)[0]  # every document's rank reads back through the rank table
    for t in range(ext.T):
        n = int(ext.length[s, t])
        np.testing.assert_array_equal(ext.rank(s, t, ext.D[s, t, :n]), np.arange(1, n + 1))
    # the qrels located in the extension as in the pool
    np.testing.assert_array_equal(
        np.stack(ext.locate(c.qrels["qid"], c.qrels["docno"])),
        np.stack(pool.locate(c.qrels["qid"], c.qrels["docno"])),
    )
    assert (pool.D == before[0]).all() and (pool.RK == before[1]).all()
    assert (pool.universe == before[2]).all() and (pool.L, pool.U) == before[3:]
    assert pool.extended([u.assign(qid="999")]) is None  # a topic the pool lacks


def _same_encoding(a: DenseRuns, b: DenseRuns) -> None:
    assert a.names.equals(b.names) and a.docs.equals(b.docs) and a.qids.equals(b.qids)
    assert (a.T, a.R, a.U, a.L, a.NG) == (b.T, b.R, b.U, b.L, b.NG)
    for x, y in [(a.universe, b.universe), (a.tstart, b.tstart), (a.D, b.D)]:
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert np.array_equal(a.length, b.length)
    if a.RK is None:
        assert b.RK is None and np.array_equal(a._keys, b._keys)
        assert np.array_equal(a._vals, b._vals)
    else:
        assert a.RK.dtype == b.RK.dtype and np.array_equal(a.RK, b.RK)


@pytest.mark.parametrize("rank_bytes", [None, 0])
@pytest.mark.parametrize("slack", [None, -(10**9)])
def test_encoding_by_chunks_of_rows_and_of_pooled_rows(monkeypatch, rank_bytes, slack):
    """The entries encoded a few rows at a time (two frames, qrels documents no run has),
    with the rank table or sorted keys, the universe from a presence table or a sort: the
    same encoding as in one chunk; and the pooled rows' columns encode as the rows do."""
    from pbtools.engine import ranges

    c = synth.generate(topics=4, docs=60, runs=5, orgs=3, run_length=25, depth=5, seed=4)
    runs = ranked(c.runs)
    other = ranked(pd.concat([run("p1", "abc"), run("p2", "ca", qid=runs["qid"].iloc[0])]))
    if rank_bytes is not None:
        monkeypatch.setattr(dense, "RANK_TABLE_BYTES", rank_bytes)
    if slack is not None:
        monkeypatch.setattr(dense, "PRESENCE_SLACK", slack)
    whole = DenseRuns([runs, other], [c.qrels])
    monkeypatch.setattr(ranges, "CHUNK", 16 * 7)  # 7 rows a chunk
    _same_encoding(DenseRuns([runs, other], [c.qrels]), whole)
    keep = runs["name"].astype(str).isin(["o01r2", "o03r1"]).to_numpy()
    assert 0 < keep.sum() < len(keep)
    got = DenseRuns([dense.pooled_rows(runs, keep)], [c.qrels])
    _same_encoding(got, DenseRuns([runs[keep]], [c.qrels]))
