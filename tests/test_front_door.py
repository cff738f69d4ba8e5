"""The front door: ``import pbtools`` offers one verb per task, lazily, with one vocabulary
(``leave_out=``, ``topics=``; the old spellings warn), and options that cannot both apply are
not silently dropped (``--lenient`` under ``--protocol``)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pandas as pd
import pytest

import pbtools
from pbtools import synth
from pbtools.cli import main

VERBS = {
    "read_collection": "pbtools.io.readers",
    "evaluate": "pbtools.measures.evaluate",
    "analyze": "pbtools.experiments.analysis",
    "correct": "pbtools.experiments.new_run",
    "compare": "pbtools.stats.comparison",
    "report": "pbtools.toplevel",
    "simulate_pool": "pbtools.toplevel",
}


def test_every_verb_is_the_subpackages_own_function():
    import importlib

    for name, module in VERBS.items():
        assert getattr(pbtools, name) is getattr(importlib.import_module(module), name), name
        assert name in pbtools.__all__ and name in dir(pbtools)
    with pytest.raises(AttributeError, match="no attribute 'reproduce_all'"):
        pbtools.reproduce_all  # noqa: B018


def test_import_pbtools_stays_lazy():
    code = (
        "import sys, pbtools\n"
        "heavy = ['scipy', 'pbtools.measures', 'pbtools.experiments', 'pbtools.stats',"
        " 'pbtools.toplevel']\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "pbtools.evaluate\n"
        "print('pbtools.measures' in sys.modules, 'pbtools.experiments' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True False"]


@pytest.fixture(scope="module")
def small():
    return synth.generate(topics=5, docs=60, runs=6, orgs=3, run_length=20, depth=10, seed=1)


def test_simulate_pool_is_pool_simulate(small):
    from pbtools.pooling import Pool

    a = pbtools.simulate_pool(small.runs, small.qrels, "rbp:0.8", budget=5, seed=3)
    b = Pool.simulate(small.runs, small.qrels, "rbp:0.8", budget=5, seed=3)
    pd.testing.assert_frame_equal(a.qrels, b.qrels)
    assert a.qrels.groupby("qid", observed=True).size().max() == 5


def test_report_of_an_analysis_or_of_a_collection(small, tmp_path, monkeypatch):
    from pbtools.experiments import htmlreport
    from pbtools.experiments.analysis import Analysis

    # the page itself is tests/experiments/test_report.py's: here, what report() hands it
    drawn = []

    def page(analysis, *, title=None):
        drawn.append(analysis)
        return f"<page {title} {analysis.params['measures']}>"

    monkeypatch.setattr(htmlreport, "html_report", page)
    opts = {"measures": ["P@10"], "leave_out": ["org"], "run_sets": ["all"], "progress": False}
    frames = (small.runs, small.qrels, small.orgs)
    a = pbtools.analyze(frames, pooled=small.pooled, depth=10, **opts)
    assert pbtools.report(a, title="T") == "<page T ['P@10']>" and drawn == [a]
    path = pbtools.report(a, tmp_path / "r.html")
    assert path == tmp_path / "r.html" and path.read_text() == "<page None ['P@10']>"
    with pytest.raises(pbtools.InputError, match="measures apply to the analysis"):
        pbtools.report(a, measures=["AP"])
    # a collection is analysed first, with the options
    opts["measures"] = ["P@5"]
    assert pbtools.report(frames, pooled=small.pooled, depth=10, **opts) == "<page None ['P@5']>"
    assert isinstance(drawn[-1], Analysis) and drawn[-1] is not a


def test_leave_out_is_the_one_spelling_and_unit_warns(small):
    from pbtools.pooling import Pool

    pool = Pool.from_depth(small.runs, small.qrels, 10, pooled=small.pooled)
    new = pool.leave_out(leave_out="org", orgs=small.orgs)
    with pytest.warns(DeprecationWarning, match=r"Pool.leave_out\(unit=...\) is deprecated"):
        old = pool.leave_out(unit="org", orgs=small.orgs)
    pd.testing.assert_frame_equal(new, old)
    pooled_orgs = small.orgs[small.orgs["name"].isin(small.pooled)]["org"].astype(str)
    assert set(new["left_out"].astype(str)) == set(pooled_orgs)


def test_topics_is_the_one_spelling_and_all_topics_warns(small):
    run = small.runs[small.runs["qid"].astype(str) != str(small.runs["qid"].iloc[0])]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new spelling never warns
        new = run.pb.evaluate(small.qrels, ["P@5"], topics="all")
        judged = run.pb.evaluate(small.qrels, ["P@5"])
    with pytest.warns(DeprecationWarning, match='use topics="all"'):
        old = run.pb.evaluate(small.qrels, ["P@5"], all_topics=True)
    pd.testing.assert_frame_equal(new, old)
    # the missing topic scores 0 in every run's average over all topics: 4/5 of the judged mean
    assert new["value"].to_numpy() == pytest.approx(judged["value"].to_numpy() * 4 / 5)


@pytest.fixture(scope="module")
def dirty_track(small, tmp_path_factory):
    """The small collection as a track whose first run file ends with a short line: strict
    reading refuses it, lenient reading skips the line."""
    track = small.write(tmp_path_factory.mktemp("dirty") / "T")
    first = sorted((track / "Runs").iterdir())[0]
    first.write_text(first.read_text() + "1 Q0\n")
    return track


@pytest.mark.slow  # five analyses
def test_protocol_reads_leniently_and_says_so(dirty_track):
    assert main(["analyze", str(dirty_track), "-m", "P@10", "--no-progress"]) == 2
    opts = {"measures": ["P@10"], "leave_out": ["org"], "run_sets": ["all"], "progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = pbtools.analyze(dirty_track, lenient=True, **opts)
        preset = pbtools.analyze(dirty_track, protocol="lipani2015", **opts)
        asked = pbtools.analyze(dirty_track, protocol="lipani2015", lenient=True, **opts)
    assert plain.params["lenient"] is True and plain.params["float32"] is False
    for a in (preset, asked):  # the reading the preset did, whatever was asked
        assert a.params["lenient"] is True
        assert a.params["float32"] is True and a.params["run_id"] == "lipani2015"
    args = ["analyze", str(dirty_track), "-m", "P@10", "--leave-out", "org", "--no-progress"]
    assert main([*args, "--protocol", "lipani2015", "--lenient"]) == 0


def test_an_option_the_protocol_overrides_is_refused(tiny_collection, capsys):
    args = ["analyze", str(tiny_collection), "--protocol", "lipani2015", "--run-id", "file"]
    assert main(args) == 2
    assert "--run-id file cannot apply with --protocol lipani2015" in capsys.readouterr().err
