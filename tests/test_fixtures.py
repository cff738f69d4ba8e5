"""Tests for tests/track_fixtures.py: the awkward track, its plants, and pool inference on it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import track_fixtures as fixtures

from pbtools import frames, io
from pbtools.cli import main
from pbtools.frames import TrecFormatError
from pbtools.pooling.inference import infer_pool

POLICY_NAMES = ["paper", "snapshot2015", "later", "counted10"]
# what every rule must pool on the default track: truth 20 pooled runs, d = 10
DEFAULT_RP = {"paper": 19, "snapshot2015": 17, "later": 14, "counted10": 18}


@pytest.fixture(scope="module")
def track(tmp_path_factory) -> fixtures.AwkwardTrack:
    return fixtures.awkward_track(tmp_path_factory.mktemp("awk") / "AWK", qrels_only_topics=1)


@pytest.fixture(scope="module")
def col(track):
    return io.read_collection(track.path)  # strict: the track is valid TREC input


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_seeded(tmp_path):
    small = dict(runs=10, pooled=7, orgs=6, topics=4, docs=300, min_length=20, max_length=40)
    small |= dict(inside=1, inside_more=1, missing_below=1, below=1, short=1)
    a = fixtures.awkward_track(tmp_path / "a", seed=3, **small)
    b = fixtures.awkward_track(tmp_path / "b", seed=3, **small)
    c = fixtures.awkward_track(tmp_path / "c", seed=4, **small)
    assert _tree(a.path) == _tree(b.path) and a.pooled == b.pooled
    pd.testing.assert_frame_equal(a.plants.drop(columns="file"), b.plants.drop(columns="file"))
    assert _tree(a.path) != _tree(c.path)


def test_layout_and_format(track, col):
    root = track.path
    files = sorted(p.name for p in (root / "Runs").iterdir())
    assert len(files) == 30 and all(f.startswith("input.") for f in files)
    line = (root / "Runs" / files[0]).read_text().splitlines()[0]
    assert len(line.split("\t")) == 6 and " " not in line  # tab-separated
    assert (root / "desc.xml").is_file() and (root / "truth" / "qrels").is_file()
    assert col.orgs["org"].nunique() == 18 and col.orgs["name"].nunique() == 30
    assert set(col.qrels["label"].unique()) == {0, 1, 2}
    lengths = col.runs.groupby(["name", "qid"], observed=True).size()
    assert lengths.max() <= 200 + 3 and (lengths >= 100).mean() > 0.99  # one short ranking
    assert col.repairs.empty


def test_topics(track, col):
    run_topics = set(col.runs["qid"].astype(str))
    qrels_topics = set(col.qrels["qid"].astype(str))
    assert run_topics - qrels_topics == set(track.run_only_topics)
    assert qrels_topics - run_topics == set(track.qrels_only_topics) == {"022"}
    assert (
        sorted(run_topics & qrels_topics) == track.judged_topics and len(track.judged_topics) == 20
    )
    per_run = col.runs.groupby("name", observed=True)["qid"].nunique()
    assert (per_run == 21).all()  # every run answers every topic, the unjudged one included


def test_truth_holds_the_qrels_labels(track, col):
    truth = io.read_qrels(track.path / "truth" / "qrels")
    j = col.qrels.merge(truth, on=["qid", "docno"], how="left", suffixes=("", "_truth"))
    assert j["label_truth"].notna().all() and (j["label"] == j["label_truth"]).all()
    # every retrieved document on a judged topic has a true label
    judged = frames.judge(col.runs[col.runs["qid"].astype(str).isin(track.judged_topics)], truth)
    assert judged["label"].notna().all()


@pytest.fixture(scope="module")
def flags(col):
    """``flags(name, qid, n)``: the judged flags of the top n documents of one ranking (every
    run judged once; the runs are in trec order, so a ranking's rows are its ranks)."""
    judged = frames.judge(col.runs, col.qrels)
    is_judged = judged["label"].notna().to_numpy()
    keys = pd.DataFrame({"name": judged["name"].astype(str), "qid": judged["qid"].astype(str)})
    rows = keys.groupby(["name", "qid"], sort=False).indices
    return lambda name, qid, n: is_judged[rows[(name, qid)][:n]]


def test_plants_are_what_the_truth_says(track, col, flags):
    d = track.depth
    plants = track.plants
    assert sorted(plants.loc[plants["pooled"], "name"]) == track.pooled and len(track.pooled) == 20
    assert (plants.loc[~plants["pooled"], "plant"] == "novel").all()
    counts = plants["plant"].value_counts().to_dict()
    assert counts == {
        "clean": 11,
        "novel": 10,
        "inside": 3,
        "inside_more": 2,
        "below": 2,
        "missing_below": 1,
        "short": 1,
    }
    for row in plants.itertuples():
        if row.plant == "clean":
            for q in track.judged_topics[:3]:
                assert flags(row.name, q, d).all()
            continue
        judged = flags(row.name, row.qid, d + 3)
        unjudged = [i + 1 for i in np.flatnonzero(~judged)]
        planted = [int(p) for p in row.positions.split(",")] if row.positions else []
        if row.plant == "short":
            assert len(judged) == d // 2 and judged.all()
        elif row.plant == "novel":
            assert set(planted) <= set(unjudged) and len(planted) == d // 5 + 1
        else:  # inside the top d exactly the planted ranks are unjudged
            assert [p for p in unjudged if p <= d] == [p for p in planted if p <= d], row
            assert set(planted) <= set(unjudged)
    inside = plants[plants["plant"] == "inside"]
    assert (inside["positions"].str.split(",").str[0] == "1").any()  # a zero judged prefix


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_each_rule_recovers_what_it_implies(track, col, policy):
    info = infer_pool(col.runs, col.qrels, policy)
    assert info.depth == track.depth == 10
    assert info.pooled_runs == track.expected_pooled(policy)
    assert len(info.pooled_runs) == DEFAULT_RP[policy]
    assert set(info.pooled_runs) <= set(track.pooled) | {
        n for n, p in zip(track.plants["name"], track.plants["plant"], strict=True) if p != "novel"
    }


@pytest.mark.parametrize(
    ("depth", "seed", "extra"),
    [(20, 1, {}), (15, 2, {}), (10, 5, dict(runs=40, pooled=28, orgs=25, inside=5))],
)
def test_rules_on_other_depths_and_seeds(tmp_path, depth, seed, extra):
    track = fixtures.awkward_track(
        tmp_path / "AWK", depth=depth, seed=seed, topics=10, docs=600, **extra
    )
    col = io.read_collection(track.path)
    for policy in POLICY_NAMES:
        info = infer_pool(col.runs, col.qrels, policy)
        assert info.depth == depth, policy
        assert info.pooled_runs == track.expected_pooled(policy), policy


def test_shared_dictionaries_do_not_make_judged_topics(track, col):
    """Issue 14 item 1: with qid dictionaries shared between runs and qrels, the run-only topic
    is a category of the qrels' qid column; inference must not treat it as judged."""
    rq, qq = frames.unify(col.runs["qid"], col.qrels["qid"])
    assert track.run_only_topics[0] in set(qq.cat.categories)
    runs, qrels = col.runs.assign(qid=rq), col.qrels.assign(qid=qq)
    for policy in POLICY_NAMES:
        info = infer_pool(runs, qrels, policy)
        assert (info.depth, info.pooled_runs) == (10, track.expected_pooled(policy))


@pytest.mark.parametrize("policy", [*POLICY_NAMES, "lipani2015", "per_run"])
def test_cli_pool(track, policy, capsys):
    assert main(["pool", str(track.path), "--json", "--policy", policy]) == 0
    out = json.loads(capsys.readouterr().out)
    canonical = {"lipani2015": "paper", "per_run": "later"}.get(policy, policy)
    assert out["policy"] == canonical
    assert (out["d"], out["|R|"], out["|O|"], out["|T|"]) == (10, 30, 18, 21)
    assert out["|R_p|"] == out["|R_p| files"] == DEFAULT_RP[canonical]
    assert out["pooled_runs"] == track.expected_pooled(canonical)
    assert "022" in out["topics"] and track.run_only_topics[0] not in out["topics"]


def test_cli_pool_text(track, capsys):
    assert main(["pool", str(track.path)]) == 0
    out = capsys.readouterr().out
    assert "|R_p|  19" in out and "d      10" in out
    assert "pooled runs (paper policy)" in out


@pytest.fixture(scope="module")
def nan_track(tmp_path_factory) -> fixtures.AwkwardTrack:
    return fixtures.awkward_track(tmp_path_factory.mktemp("nan") / "AWK", nan_scores=3, seed=1)


def test_nan_scores_are_written(nan_track):
    nl = nan_track.nan_lines
    assert len(nl) == 3 and nl["file"].nunique() == 1 and nl["qid"].nunique() == 3
    lines = Path(nl["file"].iloc[0]).read_text().splitlines()
    for row in nl.itertuples():
        fields = lines[row.line - 1].split("\t")
        assert fields[4] == "nan" and fields[0] == row.qid and fields[2] == row.docno


def test_strict_refuses_nan_naming_file_and_line(nan_track, capsys):
    first = nan_track.nan_lines.iloc[0]
    with pytest.raises(TrecFormatError, match="NaN") as err:
        io.read_collection(nan_track.path)
    assert f"{first['file']}:{first['line']}" in str(err.value)
    assert main(["pool", str(nan_track.path)]) == 2
    assert f"{first['file']}:{first['line']}" in capsys.readouterr().err


def test_lenient_pool_with_nan_scores(nan_track, capsys):
    # the NaN documents are the last of their rankings: ordered last, the pool is unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = io.read_collection(nan_track.path, lenient=True)
    assert len(col.repairs) >= 3  # every NaN line reported
    info = infer_pool(col.runs, col.qrels)
    assert (info.depth, info.pooled_runs) == (10, nan_track.expected_pooled("paper"))
    assert main(["pool", str(nan_track.path), "--lenient", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pooled_runs"] == nan_track.expected_pooled("paper") and out["d"] == 10


def test_expected_pooled_and_bad_parameters(track, tmp_path):
    with pytest.raises(ValueError, match="policy"):
        track.expected_pooled("lipani2015")
    bad = [
        dict(depth=5),
        dict(min_length=15),
        dict(max_length=2000),
        dict(pooled=0),
        dict(pooled=5),
        dict(orgs=31),
        dict(nan_scores=21),
        dict(inside=-1),
        dict(topics=0),
    ]
    for kw in bad:
        with pytest.raises(ValueError):
            fixtures.awkward_track(tmp_path / "bad", **kw)
