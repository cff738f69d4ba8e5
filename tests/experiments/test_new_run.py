"""``pbtools.correct(runs, collection, measures)``: the notebook one-liner (issue 12 item 4)
and the topic bootstrap behind its confidence intervals."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pbtools
from pbtools import synth
from pbtools.corrections.bootstrap import topic_bootstrap
from pbtools.corrections.correct import correct as correct_runs
from pbtools.corrections.correct import run_estimators
from pbtools.engine.build import from_frames
from pbtools.measures import parse_all
from pbtools.presets import resolve

TREC2 = Path(__file__).resolve().parents[3] / "shared" / "data" / "trec" / "TREC-2" / "Adhoc"
MEASURES = ["P@5", "P@10", "AP", "nDCG@10"]


@pytest.fixture(scope="module")
def coll():
    return synth.generate(topics=10, runs=8, orgs=4, docs=300, run_length=60, depth=10, seed=3)


def _split(c, name):
    rest = c.runs[c.runs["name"] != name]
    new = c.runs[c.runs["name"] == name]
    return (rest, c.qrels, c.orgs), new


def test_pyterrier_frame_one_row_per_supported_estimator(coll):
    collection, new = _split(coll, "o04r2")
    pt = new.drop(columns=["name", "rank"]).assign(rank=np.arange(len(new)) % 60)  # 0-based
    out = pbtools.correct(pt, collection, MEASURES, n_boot=30)
    assert list(out.columns[:9]) == [
        "name",
        "measure",
        "estimator",
        "value",
        "pi_low",
        "pi_high",
        "topic_ci_low",
        "topic_ci_high",
        "topic_se",
    ]
    assert out.columns[-1] == "extrapolated"
    assert not {"ci_low", "ci_high", "se", "reduced", "share"} & set(out.columns)
    got = set(zip(out["measure"], out["estimator"], strict=True))
    want = {(m, e) for m in MEASURES for e in ("reduced", "webber")}
    want |= {("P@5", "lipani"), ("P@10", "lipani")}  # Lipani: P@n only
    assert got == want
    assert (out["name"] == "run").all()
    tol = 1e-12
    lo, hi = out["topic_ci_low"], out["topic_ci_high"]
    assert ((lo <= out["value"] + tol) & (out["value"] <= hi + tol)).all()
    assert (lo < hi).all()
    # the point estimates are the estimators' own (no bootstrap involved)
    plain = correct_runs(new, (collection[0], coll.qrels, coll.orgs), MEASURES, depth=10)
    pooled = set(out.attrs["pooled_runs"])
    plain = correct_runs(
        new,
        (collection[0][collection[0]["name"].astype(str).isin(pooled)], coll.qrels, coll.orgs),
        MEASURES,
        depth=out.attrs["depth"],
    )
    np.testing.assert_allclose(out["value"].to_numpy(), plain["value"].to_numpy(), atol=1e-12)


def test_unpooled_runs_of_the_collection_stay_out_of_rp(coll):
    collection, new = _split(coll, "o04r2")
    out = pbtools.correct(new, collection, ["P@10"], n_boot=5)
    unpooled = out.attrs["unpooled_runs"]
    assert unpooled, "the synthetic collection has runs that did not contribute"
    assert set(unpooled).isdisjoint(out.attrs["pooled_runs"])
    n_pooled = out.loc[out["estimator"] == "webber", "n_pooled"].iloc[0]
    assert n_pooled == len(out.attrs["pooled_runs"])


def _resampled(frame: pd.DataFrame, mult: dict) -> pd.DataFrame:
    """``frame`` with topic q repeated mult[q] times as q#1, q#2, ... (absent when 0)."""
    parts = []
    for q, m in mult.items():
        rows = frame[frame["qid"].astype(str) == q]
        for k in range(m):
            parts.append(rows.assign(qid=f"{q}#{k}"))
    out = pd.concat(parts, ignore_index=True)
    out["qid"] = out["qid"].astype(str)
    return out


@pytest.mark.parametrize("protocol", [None, "lipani2015"])
def test_a_replicate_is_the_estimator_on_the_resampled_collection(coll, protocol):
    """Weights = multiplicities give exactly the estimates on a collection whose topics are
    duplicated (or dropped) accordingly — for the non-linear Lipani estimator too."""
    (rest, qrels, orgs), new = _split(coll, "o04r2")
    pooled = rest[~rest["name"].isin(["o01r2"])]
    opts = resolve(protocol)
    qids = sorted(qrels["qid"].astype(str).unique())
    rng = np.random.default_rng(7)
    mult = dict(zip(qids, rng.multinomial(len(qids), [1 / len(qids)] * len(qids)), strict=True))
    ests = ["reduced", "webber", "lipani"]
    pr = from_frames(pooled, new, qrels, depth=10, orgs=orgs, rp=str(opts["rp"]))
    pr.memoize = True
    run_estimators(pr, parse_all(MEASURES), ests, opts)  # fills the memo unweighted
    w = np.array([mult.get(str(q), 0) for q in pr.enc.qids], dtype=np.float64)
    assert w.sum() == len(qids) and (w == 0).any()  # some topics drawn twice, some dropped
    pr.set_weights(w)
    weighted = run_estimators(pr, parse_all(MEASURES), ests, opts)
    dup = from_frames(
        _resampled(pooled, mult),
        _resampled(new, mult),
        _resampled(qrels, mult),
        depth=10,
        orgs=orgs,
        rp=str(opts["rp"]),
    )
    direct = run_estimators(dup, parse_all(MEASURES), ests, opts)
    np.testing.assert_allclose(weighted["value"], direct["value"], atol=1e-12)
    lip = weighted["estimator"] == "lipani"
    assert (weighted.loc[lip, "fired"].to_numpy() == direct.loc[lip, "fired"].to_numpy()).all()


def test_bootstrap_is_seeded_and_leaves_the_problem_unweighted(coll):
    (rest, qrels, orgs), new = _split(coll, "o04r2")
    pr = from_frames(rest, new, qrels, depth=10, orgs=orgs)
    opts = resolve(None)

    def est(p):
        return run_estimators(p, parse_all(["P@10", "AP"]), ["reduced", "webber", "lipani"], opts)

    # ten resamples show what forty did: the same seed, the same intervals; another, others
    a = topic_bootstrap(pr, est, n_boot=10, seed=1)
    b = topic_bootstrap(pr, est, n_boot=10, seed=1)
    c = topic_bootstrap(pr, est, n_boot=10, seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["topic_ci_low"], c["topic_ci_low"])
    assert pr.weights is None and not pr.memoize
    pd.testing.assert_frame_equal(
        est(pr), a.drop(columns=["topic_ci_low", "topic_ci_high", "topic_se"])
    )


def test_a_pooled_run_needs_leave_out(coll):
    runs = coll.runs
    collection = (runs, coll.qrels, coll.orgs)
    pooled_name = "o01r1"
    new = runs[runs["name"] == pooled_name]
    with pytest.raises(ValueError, match="leave_out"):
        pbtools.correct(new, collection, ["P@10"], n_boot=5)
    out = pbtools.correct(
        new, collection, ["P@10"], n_boot=5, leave_out="org", estimators=("true", "reduced")
    )
    assert set(out["estimator"]) == {"true", "reduced"}
    assert out["value"].notna().all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_boot": 0}, "n_boot"),
        ({"n_boot": 2.5}, "n_boot"),
        ({"confidence": 1.5}, "confidence"),
        ({"estimators": ("nope",)}, "nope"),
        ({"measures": ["P@ten"]}, "P@ten"),
    ],
)
def test_bad_arguments_are_refused_before_reading(kwargs, match):
    kw = {"measures": ["P@10"], **kwargs}
    with pytest.raises((ValueError, KeyError), match=match):
        pbtools.correct(pd.DataFrame(), "/nonexistent/track", **kw)


def test_empty_and_wrongly_typed_new_runs_are_refused(coll):
    collection, new = _split(coll, "o04r2")
    with pytest.raises(ValueError, match="no rows"):
        pbtools.correct(new.iloc[:0], collection, ["P@10"], n_boot=5)
    with pytest.raises(TypeError, match="new_run"):
        pbtools.correct(42, collection, ["P@10"], n_boot=5)


def test_files_in_files_out(coll, tmp_path):
    track = coll.write(tmp_path / "track")
    run_file = track / "Runs" / "input.o04r2"
    moved = tmp_path / "mine.run"
    run_file.rename(moved)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pbtools.correct(str(moved), track, ["P@10"], n_boot=20)
    assert set(out["name"]) == {"o04r2"}
    assert out["topic_ci_low"].notna().all()


@pytest.mark.slow
@pytest.mark.skipif(not TREC2.is_dir(), reason="../shared TREC-2 data is not present")
def test_trec2_one_liner():
    from pbtools.io import read_runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = read_runs(sorted((TREC2 / "Runs").iterdir()), lenient=True)
        qrels = TREC2 / "QRels" / "qrels.101-150.disk1.disk2"
        files = [qrels, *sorted(p for p in (TREC2 / "Runs").iterdir() if "CLARTA" not in p.name)]
        new = runs[runs["name"] == "CLARTA"]
        out = pbtools.correct(new, files, ["P@10", "AP"], n_boot=20)
    assert out.attrs["depth"] == 100
    r = out.set_index(["measure", "estimator"])
    assert r.loc[("P@10", "reduced"), "value"] == pytest.approx(0.568, abs=1e-4)
    assert (r["topic_ci_low"] < r["value"]).all() and (r["value"] < r["topic_ci_high"]).all()
    # the prediction interval: far narrower than the topic interval at P@10 (issue 26)
    p10 = r.loc["P@10"]
    assert (p10["pi_low"] <= p10["value"] + 1e-12).all()
    pi_w, topic_w = p10["pi_high"] - p10["pi_low"], p10["topic_ci_high"] - p10["topic_ci_low"]
    assert (pi_w < topic_w / 3).all()


def test_cli_correct_bootstrap(coll, tmp_path):
    from pbtools.cli import main

    track = coll.write(tmp_path / "track")
    out = tmp_path / "out.parquet"
    qrels, runs, new = track / "QRels" / "qrels", track / "Runs", track / "Runs" / "input.o04r2"
    args = [str(qrels), str(runs), str(new), "--desc", str(track / "desc.xml")]
    assert main(["correct", *args, "--bootstrap", "-1"]) == 2
    assert main(["correct", *args, "--bootstrap", "20", "--confidence", "1.0"]) == 2
    assert not out.exists()
    rc = main(
        ["correct", *args, "-m", "P@10", "--bootstrap", "20", "--format", "parquet", "-o", str(out)]
    )
    assert rc == 0
    from pbtools.io import read_parquet

    res = read_parquet(out)
    assert {"pi_low", "pi_high", "topic_ci_low", "topic_ci_high", "topic_se"} <= set(res.columns)
    assert res["topic_ci_low"].notna().all() and res["pi_low"].notna().all()
    assert res.attrs["metadata"]["bootstrap"] == 20


def test_cli_correct_table_prints_counts_as_integers(coll, tmp_path, capsys):
    from pbtools.cli import main

    track = coll.write(tmp_path / "track")
    qrels, runs = track / "QRels" / "qrels", track / "Runs"
    assert main(["correct", str(qrels), str(runs), str(runs / "input.o04r2"), "-m", "P@10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[1].split()
    webber = next(line.split() for line in lines if " webber " in line)
    n_pooled = webber[header.index("n_pooled")]
    assert n_pooled.isdigit(), n_pooled
    lipani = next(line.split() for line in lines if " lipani " in line)
    assert lipani[header.index("fired")] in ("True", "False")
