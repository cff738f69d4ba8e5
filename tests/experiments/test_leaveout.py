"""pbtools.experiments.leaveout: leave-one-out over a collection, checked against the frame-level
pool reductions (pbtools.pooling) and the evaluation of pbtools.measures on a small synthetic
collection."""

from __future__ import annotations

import pandas as pd
import pytest

from pbtools import measures, pooling, synth
from pbtools.errors import InputError
from pbtools.experiments.leaveout import (
    SCORE_COLUMNS,
    experiment_tables,
    leave_one_out_experiment,
    leave_one_out_experiments,
)

MS = ["P@10", "AP"]
DEPTH = 10


@pytest.fixture(scope="module")
def col():
    """A synthetic collection whose qrels also judge relevant 40 retrieved documents that no
    pooled run ranks in its top d (as real qrels do): the re-pool of a run set drops them."""
    c = synth.generate(
        topics=6, docs=80, runs=8, orgs=4, run_length=30, depth=DEPTH, unpooled=1, seed=2
    )
    key = ["qid", "docno"]
    extra = c.truth.astype({"qid": str, "docno": str}).merge(
        c.qrels.astype({"qid": str, "docno": str})[key], on=key, how="left", indicator=True
    )
    extra = extra[extra["_merge"] == "left_only"].sample(40, random_state=0).assign(label=1)
    qrels = pd.concat([c.qrels.astype({"qid": str, "docno": str}), extra[[*key, "label"]]])
    c.qrels = qrels.reset_index(drop=True)
    return c


def _run(col, orgs=None, **kw):
    frames = (col.runs, col.qrels, col.orgs if orgs is None else orgs)
    kw = {"estimators": ["reduced", "webber", "lipani"], **kw}
    return leave_one_out_experiment(frames, MS, pooled=col.pooled, depth=DEPTH, **kw)


def _scores(runs, qrels) -> pd.DataFrame:
    ev = measures.evaluate(runs, qrels, MS, warn=False)
    return ev.astype({"name": str, "measure": str})[["name", "measure", "value"]]


@pytest.mark.parametrize("leave_out", ["org", "run"])
def test_true_and_reduced_scores_are_those_of_the_reduced_pools(col, leave_out):
    res = _run(col, leave_out=leave_out)
    assert list(res.columns) == list(SCORE_COLUMNS)
    assert set(res["estimator"].astype(str)) == {"reduced", "webber", "lipani"}
    assert (res["runs"] == "all").all()
    pooled = col.runs[col.runs["name"].astype(str).isin(col.pooled)]
    # the truth: every pooled run on the re-pool of the pooled runs at depth d
    red = res[res["estimator"] == "reduced"].astype({"name": str, "measure": str})
    assert sorted(red["name"].unique()) == sorted(col.pooled)  # the unpooled run: never
    both = red.merge(
        _scores(pooled, pooling.repool(pooled, col.qrels, DEPTH)), on=["name", "measure"]
    )
    assert len(both) == len(red) == len(col.pooled) * len(MS)
    assert (both["true"] - both["value"]).abs().max() < 1e-12
    # the reduced estimate: the run on the re-pool without its unit (pooling.leave_one_out)
    reduced = pooling.leave_one_out(pooled, col.qrels, DEPTH, leave_out, col.orgs, repool=True)
    unit_of = dict(zip(col.orgs["name"].astype(str), col.orgs["org"].astype(str), strict=True))
    if leave_out == "run":
        unit_of = {n: n for n in unit_of}
    parts = []
    for unit, q in reduced.groupby("left_out", observed=True):
        mine = pooled[pooled["name"].astype(str).map(unit_of) == str(unit)]
        parts.append(_scores(mine, q.drop(columns="left_out")))
    want = pd.concat(parts).rename(columns={"value": "want"})
    got = red.merge(want, on=["name", "measure"])
    assert len(got) == len(red)
    assert (got["estimate"] - got["want"]).abs().max() < 1e-12
    assert (got["left_out"].astype(str) == got["name"].map(unit_of)).all()
    # leaving a unit out can only lose relevant documents: P@10 never rises
    p10 = got[got["measure"] == "P@10"]
    assert (p10["estimate"] <= p10["true"] + 1e-12).all()
    assert (p10["estimate"] < p10["true"]).any()  # and the collection is biased somewhere


def test_a_run_orgs_does_not_list_stays_in_the_pool_unevaluated(col):
    full = _run(col, estimators=["reduced"])
    last = col.pooled[-1]
    org_of = dict(zip(col.orgs["name"].astype(str), col.orgs["org"].astype(str), strict=True))
    assert [n for n in col.pooled if org_of[n] == org_of[last]] == [last]  # its org's only one
    part = _run(col, orgs=col.orgs[col.orgs["name"] != last], estimators=["reduced"])
    assert last not in set(part["name"].astype(str))
    keep = full[full["name"].astype(str) != last].reset_index(drop=True)
    pd.testing.assert_frame_equal(
        part.astype({"name": str}).reset_index(drop=True), keep.astype({"name": str})
    )


def test_top75_redoes_the_experiment_among_the_best_runs(col):
    res = _run(col, runs="top75", estimators=["reduced"])
    assert (res["runs"] == "top75").all()
    pooled = col.runs[col.runs["name"].astype(str).isin(col.pooled)]
    full = _scores(pooled, pooling.repool(pooled, col.qrels, DEPTH))
    k = int(0.75 * len(col.pooled))
    for m, g in full.groupby("measure"):
        ranked = g.sort_values(["value", "name"], ascending=[False, True])
        assert ranked["value"].iloc[k - 1] > ranked["value"].iloc[k]  # no tie at the cut
        chosen = set(res.loc[res["measure"].astype(str) == m, "name"].astype(str))
        assert chosen == set(ranked["name"].iloc[:k]), m


def test_configurations_together_equal_one_at_a_time(col):
    frames = (col.runs, col.qrels, col.orgs)
    configs = [{"leave_out": "org", "runs": "all"}, {"leave_out": "run", "runs": "top75"}]
    together = leave_one_out_experiments(
        frames, configs, MS, ["reduced", "webber"], pooled=col.pooled, depth=DEPTH
    )
    assert len(together) == 2
    for cfg, table in zip(configs, together, strict=True):
        alone = _run(col, estimators=["reduced", "webber"], **cfg)
        pd.testing.assert_frame_equal(table, alone)


def test_truth_tables_average_to_the_true_scores(col):
    [(scores, truth)] = experiment_tables(
        (col.runs, col.qrels, col.orgs), [{}], MS, ["reduced"], pooled=col.pooled, depth=DEPTH
    )
    assert {"runs", "measure", "name", "qid", "value"} <= set(truth.columns)
    assert truth.groupby(["name", "measure"], observed=True).size().eq(6).all()  # every topic
    mean = truth.groupby(["name", "measure"], observed=True)["value"].mean().rename("mean")
    both = scores.merge(mean.reset_index(), on=["name", "measure"])
    assert len(both) == len(scores)
    assert (both["true"] - both["mean"]).abs().max() < 1e-12  # synth runs answer every topic


@pytest.mark.parametrize(
    ("config", "word"), [({"runs": "top50"}, "runs must be"), ({"leave_out": "team"}, "leave_out")]
)
def test_unknown_configurations_are_refused(col, config, word):
    with pytest.raises(InputError, match=word):
        experiment_tables((col.runs, col.qrels, col.orgs), [config], MS, ["reduced"])
