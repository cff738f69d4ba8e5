"""End-to-end runs of the paper scripts (benchmarks/sakai2008.py, webber2009.py, buckley2006.py).

Each script runs on the bundled sample ``pbtools/data/sample`` (TRACK layout) or, when it is
absent, on a tiny synthetic collection written to a temporary directory; the Parquet outputs
must exist with their documented columns and satisfy basic invariants.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pbtools import io
from pbtools.experiments import analysis

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = analysis.SAMPLE


def _load(name: str):
    """Import ``benchmarks/<name>.py`` as a module."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def track(tmp_path_factory) -> Path:
    """The bundled sample when present, else a tiny synthetic collection in the TRACK layout."""
    if (SAMPLE / "QRels").is_dir() and (SAMPLE / "Runs").is_dir():
        return SAMPLE
    from pbtools import synth

    col = synth.generate(
        topics=12, docs=300, runs=12, orgs=6, run_length=100, depth=20, unpooled=1, seed=3
    )
    return col.write(tmp_path_factory.mktemp("sample") / "track")


def _read(out: Path, name: str, columns: list[str]) -> pd.DataFrame:
    path = out / f"{name}.parquet"
    assert path.is_file(), f"{path} missing"
    df = io.read_parquet(path)
    assert set(columns) <= set(df.columns), f"{name}: {set(columns) - set(df.columns)} missing"
    assert "metadata" in df.attrs and df.attrs["metadata"]["script"]
    assert len(df) > 0
    return df


def test_sakai2008(track, tmp_path):
    sakai = _load("sakai2008")
    out = tmp_path / "sakai"
    res = sakai.run(track, out, jobs=1, progress=False, B=200, combos=2, depths=(10, 5, 1))
    assert set(res) == {
        "scores",
        "selected",
        "leave_one_team_out",
        "take_one_team",
        "tau",
        "power",
        "summary",
    }
    scores = _read(out, "scores", ["track", "kind", "condition", "name", "measure", "value"])
    assert set(scores["kind"]) == set(sakai.KINDS)
    assert scores["measure"].nunique() == 9
    loto = _read(
        out,
        "leave_one_team_out",
        [
            "team",
            "name",
            "measure",
            "label",
            "full",
            "reduced",
            "change_pct",
            "rank_full",
            "rank_reduced",
            "valid",
        ],
    )
    n_sel = len(res["selected"])
    assert loto["rank_full"].between(1, n_sel).all()
    assert loto["rank_reduced"].between(1, n_sel).all()
    # leaving a team out never adds relevant documents: AP (unjudged = non-relevant) can't rise
    ap = loto[loto["measure"] == "AP"]
    assert (ap["reduced"] <= ap["full"] + 1e-12).all()
    tau = _read(out, "tau", ["kind", "condition", "measure", "label", "tau", "valid"])
    assert tau["tau"].dropna().between(-1, 1).all()
    power = _read(
        out,
        "power",
        [
            "kind",
            "condition",
            "measure",
            "n_pairs",
            "n_significant",
            "share_significant",
            "misses",
            "false_alarms",
            "valid",
        ],
    )
    assert power["share_significant"].between(0, 1).all()
    assert (power[["misses", "false_alarms"]] >= 0).all().all()
    full = power[power["kind"] == "full"]
    assert (full["misses"] == 0).all() and (full["false_alarms"] == 0).all()
    summary = _read(
        out,
        "summary",
        [
            "kind",
            "condition",
            "measure",
            "label",
            "tau",
            "share_significant",
            "misses",
            "false_alarms",
        ],
    )
    assert summary["share_significant"].between(0, 1).all()
    for png in ("loto_change.png", "tau.png", "power.png"):
        assert (out / png).stat().st_size > 0
    assert "Table 3" in sakai.report(res)


def test_webber2009(track, tmp_path):
    webber = _load("webber2009")
    out = tmp_path / "webber"
    params = dict(progress=False, repeats=2, widths=(2, 4), common=(2, 5), topic_samples=20, seed=5)
    res = webber.run(track, out, jobs=1, **params)
    samples = _read(
        out,
        "samples",
        [
            "track",
            "width",
            "repeat",
            "seed",
            "unpooled",
            "pooled",
            "true",
            "unadjusted",
            "condensed",
            "webber_runs",
        ],
    )
    assert len(samples) == 4
    # assumed irrelevance never overestimates; the condensed list of a pooled sample never
    # scores below it
    assert (samples["unadjusted"] <= samples["true"] + 1e-12).all()
    assert (samples["condensed"] >= samples["unadjusted"] - 1e-12).all()
    mae = _read(
        out,
        "mae",
        ["track", "table", "lists", "width", "common_topics", "estimator", "mae", "n_samples"],
    )
    assert (mae["mae"] >= 0).all()
    assert set(mae["table"]) == {1, 2, 3}
    assert set(mae.loc[mae["table"] == 2, "estimator"]) == {"unadjusted", "mixed", "adjusted"}
    for png in ("table1.png", "table2.png", "table3.png"):
        assert (out / png).stat().st_size > 0
    # the same seed gives the same numbers with worker processes
    again = webber.run(track, None, jobs=2, **params)
    pd.testing.assert_frame_equal(again["mae"], res["mae"])
    assert "Table 2" in webber.report(res)


def test_buckley2006(track, tmp_path):
    buckley = _load("buckley2006")
    out = tmp_path / "buckley"
    res = buckley.run(track, out, jobs=1, progress=False, depths=(None, 10))
    orgs = _read(
        out,
        "orgs",
        [
            "track",
            "depth",
            "org",
            "runs",
            "unique",
            "unique_rel",
            "measure",
            "mean_diff",
            "max_diff",
        ],
    )
    assert (orgs["unique_rel"] <= orgs["unique"] + 1e-12).all()
    ap = orgs[orgs["measure"] == "AP"].dropna(subset=["mean_diff"])
    assert (ap["mean_diff"] >= -1e-9).all()  # removing relevant documents never raises AP
    assert (ap["max_diff"] >= ap["mean_diff"] - 1e-9).all()
    summary = _read(
        out,
        "summary",
        [
            "track",
            "depth",
            "measure",
            "n_runs",
            "mean_change_pct",
            "max_change_pct",
            "max_org",
            "unique_rel_share",
        ],
    )
    assert summary["unique_rel_share"].between(0, 1).all()
    assert np.all(summary["max_change_pct"] >= summary["mean_change_pct"] - 1e-9)
    assert (summary["max_run"] != "").all()
    for png in ("unique_rel.png", "depth.png"):
        assert (out / png).stat().st_size > 0
    assert "Buckley" in buckley.report(res)


def test_buckley_per_run_mean_is_run_weighted_org_mean(track):
    """unique_contributions(per_run=True): the per-run frame behind the per-org averages; its
    mean over runs is the org means weighted by their run counts, and the summary uses it."""
    from pbtools import pooling
    from pbtools.pooling import inference

    buckley = _load("buckley2006")
    col = io.read_collection(track, lenient=True)
    info = inference.infer_pool(col.runs, col.qrels)
    pooled, depth = sorted(map(str, info.pooled_runs)), int(info.depth)
    args = (col.runs, col.qrels, col.orgs, depth, ["AP", "Bpref"])
    per_org = pooling.unique_contributions(*args, pooled=pooled)
    per_run = pooling.unique_contributions(*args, pooled=pooled, per_run=True)
    assert list(per_run.columns) == ["name", "org", "measure", "full", "without", "diff_pct"]
    assert len(per_run) == per_org["runs"].sum()  # one row per pooled run and measure
    full, without = per_run["full"], per_run["without"]
    expect = (100 * (full - without) / full).where(full > 0)
    np.testing.assert_allclose(per_run["diff_pct"], expect, equal_nan=True)
    ok = per_run.dropna(subset=["diff_pct"])
    n_ok = ok.groupby(["org", "measure"], observed=True).size().rename("n_ok").reset_index()
    o = per_org.merge(n_ok, on=["org", "measure"]).dropna(subset=["mean_diff"])
    summary = buckley.run(track, None, jobs=1, progress=False, depths=(None,))["summary"]
    for meas, g in o.groupby("measure", observed=True):
        weighted = np.average(g["mean_diff"], weights=g["n_ok"])
        run_mean = ok.loc[ok["measure"] == meas, "diff_pct"].mean()
        assert run_mean == pytest.approx(weighted, rel=1e-12, abs=1e-12)
        if (g["n_ok"] == g["runs"]).all():  # no zero full scores: weights are the run counts
            assert run_mean == pytest.approx(np.average(g["mean_diff"], weights=g["runs"]))
        s = summary[summary["measure"] == str(meas)].iloc[0]
        assert s["mean_change_pct"] == pytest.approx(run_mean, rel=1e-12, abs=1e-12)
        assert s["n_runs"] == int(g["n_ok"].sum())
        top = ok.loc[ok.loc[ok["measure"] == meas, "diff_pct"].idxmax()]
        assert s["max_change_pct"] == pytest.approx(top["diff_pct"])
        assert (s["max_run"], s["max_org"]) == (str(top["name"]), str(top["org"]))
        assert s["max_change_pct"] == pytest.approx(g["max_diff"].max())


def test_webber_vectorised_adjustment_matches_library():
    """The script's vectorised Algorithm 2 equals pbtools.corrections.webber_common_topics."""
    from pbtools.corrections.webber_topics import webber_common_topics

    webber = _load("webber2009")
    rng = np.random.default_rng(0)
    t = rng.random(30)
    u = t * rng.random(30)
    masks = webber._topic_masks(rng, 30, 7, 4)
    assert (masks.sum(axis=1) == 7).all()
    est = webber.common_topic_estimates(t, u, masks)
    qids = [f"{i:03d}" for i in range(30)]
    unpooled = pd.DataFrame({"name": "r", "qid": qids, "value": u})
    for j, m in enumerate(masks):
        truth = pd.DataFrame({"name": "r", "qid": np.array(qids)[m], "value": t[m]})
        lib = webber_common_topics(unpooled, truth, n_boot=10)
        assert est["adjusted"][j] == pytest.approx(lib["value"].iloc[0], abs=1e-12)
        mixed = np.where(m, t, u).mean()
        assert est["mixed"][j] == pytest.approx(mixed, abs=1e-12)


def test_lipani2015(track, tmp_path):
    """Table 2, the sweeps and the figures on the sample; the Ad Hoc 2 checker catches a
    difference."""
    mod = _load("lipani2015")
    res = mod.run(
        track,
        tmp_path,
        cutoffs=(5, 10),
        alphas=(0.5, 1.0),
        indicators=("lambda", "dP"),
        progress=False,
    )
    t2 = io.read_parquet(tmp_path / "table2.parquet")
    assert list(t2.columns) == ["track", "n", "estimator", "runs", "mae", "sre", "sre_star", "tau"]
    assert set(t2["estimator"]) == {"lipani", "webber", "reduced"}
    assert set(t2["runs"]) == {"all", "top75"} and set(t2["n"]) == {5, 10}
    assert (t2["mae"] >= 0).all() and (t2["sre_star"] <= t2["sre"]).all()
    sweep = res["sweep"]
    assert {"lipani(alpha=0.5)", "lipani(alpha=1)", "lipani(indicator=dP)"} <= set(
        sweep["estimator"]
    )
    for f in ("figure1.png", "figure3.png", "figure4.png", "sweep.png", "table2.md", "table2.tex"):
        assert (tmp_path / f).stat().st_size > 0
    assert "top performer" in (tmp_path / "table2.md").read_text()
    # the checker compares TREC-2 rows with the paper: a fake row set must be reported
    fake = pd.DataFrame(
        [
            {
                "track": "TREC-2/Adhoc",
                "n": n,
                "estimator": e,
                "runs": "top75",
                "mae": mae,
                "sre": sre,
                "sre_star": 0,
            }
            for (e, n), (mae, sre, _) in mod.PAPER_ADHOC2.items()
        ]
    )
    assert mod.check_adhoc2(fake) == []
    fake.loc[0, "sre"] += 1
    assert len(mod.check_adhoc2(fake)) == 1
