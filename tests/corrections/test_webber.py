"""Webber & Park Algorithm 1 (pbtools.corrections.webber) against a literal re-implementation.

The reference below follows the paper's definition pair by pair: for each run to score u and
each p ∈ R_p(u) it builds the inner qrels Q_u,p as a frame (Q_u's lines, the documents outside
pool_d(R_p \\ {p} [∪ {u}]) made unjudged) and scores p on Q_u and Q_u,p with
:func:`pbtools.measures.evaluate`. The estimator computes the same numbers sparsely (only the
documents that can be lost, each distinct re-scored ranking once); both must agree for measures
that depend on the relevance set (AP, nDCG, Bpref, R-prec), with and without replacement, for
unpooled runs (qrels judged beyond the pool) and in leave-out settings.
"""

import numpy as np
import pandas as pd
import pytest

from pbtools import synth
from pbtools.corrections import correct
from pbtools.engine.rowgroups import dense_unique, group_rows
from pbtools.frames import ranked
from pbtools.measures import evaluate

MEASURES = ["P@5", "P@20", "AP", "nDCG@10", "nDCG", "Bpref", "Rprec", "RR", "RBP(p=0.8)@10"]


def _collection():
    c = synth.generate(topics=6, docs=120, runs=9, orgs=4, run_length=40, depth=6, seed=5)
    qrels = c.qrels.copy()
    # graded labels, so that histograms have more than two labels
    lab = qrels["label"].to_numpy().copy()
    lab[(lab > 0) & (np.arange(len(lab)) % 3 == 0)] = 2
    qrels["label"] = lab
    return c, qrels


def _top(runs: pd.DataFrame, names, depth: int) -> set:
    r = runs[runs["name"].isin(list(names)) & (runs["rank"] <= depth)]
    return set(zip(r["qid"].astype(str), r["docno"].astype(str), strict=True))


def _unjudge_outside(q: pd.DataFrame, keep: set) -> pd.DataFrame:
    inside = [k in keep for k in zip(q["qid"].astype(str), q["docno"].astype(str), strict=True)]
    return q.assign(label=np.where(inside, q["label"], -1))


def _mean(run, qrels):
    res = evaluate(run, qrels, MEASURES, warn=False)
    return dict(zip(res["measure"], res["value"], strict=True))


def reference(new, pooled, qrels, depth, replace, units):
    """Literal Algorithm 1: ``units`` maps a run to the runs withdrawn with it (None: the new
    runs are unpooled and scored on ``qrels`` as given)."""
    S, U = ranked(pooled), ranked(new)
    s_names = sorted(S["name"].unique())
    out = {}
    for u in sorted(U["name"].unique()):
        ru = U[U["name"] == u]
        if units is None:
            q_u = qrels
            rp = [p for p in s_names if p != u]
        else:
            rp = [p for p in s_names if p not in units[u]]
            q_u = _unjudge_outside(qrels, _top(S, rp, depth))
        terms = []
        for p in rp:
            inner = _top(S, [x for x in rp if x != p], depth)
            if replace:
                inner |= _top(U, [u], depth)
            rpp = S[S["name"] == p]
            full, after = _mean(rpp, q_u), _mean(rpp, _unjudge_outside(q_u, inner))
            terms.append({m: full[m] - after[m] for m in MEASURES})
        own = _mean(ru, q_u)
        for m in MEASURES:
            adj = float(np.mean([t[m] for t in terms])) if terms else 0.0
            out[(u, m)] = (own[m] + adj, adj)
    return out


def _check(res, ref):
    res = res[res["estimator"] == "webber"]
    assert len(res) == len(ref)
    for row in res.itertuples():
        value, adj = ref[(row.name, row.measure)]
        assert row.adjustment == pytest.approx(adj, abs=1e-12), (row.name, row.measure)
        assert row.value == pytest.approx(value, abs=1e-12), (row.name, row.measure)


@pytest.mark.parametrize("replace", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_unpooled_runs_match_the_literal_algorithm(replace):
    c, qrels = _collection()
    pooled = c.runs[c.runs["name"].isin(c.pooled)]
    new = c.runs[~c.runs["name"].isin(c.pooled)]
    # judgments beyond the pool: Q_u holds documents no pooled run placed in its top d
    extra = c.truth.merge(qrels[["qid", "docno"]], how="left", indicator=True)
    extra = extra[extra["_merge"] == "left_only"].drop(columns="_merge").iloc[::7]
    q = pd.concat([qrels, extra[["qid", "docno", "label"]]], ignore_index=True)
    res = correct(
        new, (pooled, q), MEASURES, depth=c.depth, estimators=("webber",), replace=replace
    )
    _check(res, reference(new, pooled, q, c.depth, replace, None))


@pytest.mark.parametrize(
    ("leave_out", "rp"),
    [  # one case in the quick subset, the others in the full suite (pytest -m slow)
        ("run", "org"),
        pytest.param("org", "org", marks=pytest.mark.slow),
        pytest.param("org", "run", marks=pytest.mark.slow),
    ],
)
def test_leave_out_matches_the_literal_algorithm(leave_out, rp):
    c, qrels = _collection()
    pooled = c.runs[c.runs["name"].isin(c.pooled)]
    org = dict(zip(c.orgs["name"], c.orgs["org"], strict=True))
    names = sorted(pooled["name"].unique())
    if leave_out == "org":
        units = {u: {p for p in names if org[p] == org[u]} for u in names}
    else:
        units = {u: {u} for u in names}
    if rp == "run":  # R_p: every pooled run but u; Q_u still the re-pool without u's unit
        ref_units = {u: {u} for u in names}
    else:
        ref_units = units
    res = correct(
        pooled,
        (pooled, qrels, c.orgs),
        MEASURES,
        leave_out=leave_out,
        depth=c.depth,
        estimators=("webber",),
        rp=rp,
    )
    if rp == "org":
        _check(res, reference(pooled, pooled, qrels, c.depth, True, units))
        return
    # rp="run" with leave_out="org": Q_u without u's organisation, R_p without u alone
    S = ranked(pooled)
    ref = {}
    for u in names:
        q_u = _unjudge_outside(qrels, _top(S, [p for p in names if p not in units[u]], c.depth))
        sub = reference(pooled[pooled["name"] == u], pooled, q_u, c.depth, True, None)
        ref.update(sub)
    assert ref_units  # R_p of the reference: every pooled run but u (units=None)
    _check(res, ref)


def test_group_rows_mixed_and_sorted_agree_with_unique():
    # many rows, few distinct; both paths (the mix, checked, and the sort it falls back to)
    rng = np.random.default_rng(0)
    cols = [rng.integers(0, 3, 500), rng.integers(0, 2, 500), rng.integers(-1, 2, 500)]
    key = np.stack(cols, axis=1)
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    for mixed in (True, False):
        rep, grp = group_rows(cols, mixed=mixed)
        assert rep.tolist() == sorted(first.tolist())  # first rows, in row order
        assert (key[rep[grp]] == key).all()
        assert (inv.ravel()[rep[grp]] == inv.ravel()).all()
    assert [a.tolist() for a in group_rows([np.zeros(0, np.int64)])] == [[], []]


def test_group_rows_one_small_key_table_agrees_with_the_mix():
    # one small non-negative column goes through a table of its values; a wide column (and
    # the same values with a second, constant column) through the mix: the same groups
    rng = np.random.default_rng(1)
    for key in (rng.integers(0, 50, 400), rng.integers(0, 3000, 400)):
        want = group_rows([key, np.zeros_like(key)])
        got = group_rows([key])
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
        _, first = np.unique(key, return_index=True)
        assert got[0].tolist() == sorted(first.tolist())
    assert group_rows([np.array([5, -1, 5])])[1].tolist() == [0, 1, 0]  # negative: the mix


def test_dense_unique_matches_unique():
    key = np.array([9, 3, 3, 0, 9, 4])
    for size in (10, 10**9):  # the flag table and the sort
        u, inv = dense_unique(key, size)
        eu, einv = np.unique(key, return_inverse=True)
        assert u.tolist() == eu.tolist() and inv.tolist() == einv.ravel().tolist()
