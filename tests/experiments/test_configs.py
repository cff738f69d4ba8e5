"""analyze()'s option objects (Reading, Design, Execution), the one scheduler, and the measure
list parsed once on each path (experiments/configs.py, measures/names.py)."""

from __future__ import annotations

import dataclasses
import warnings

import pytest

import pbtools
from pbtools import synth
from pbtools.errors import InputError
from pbtools.experiments import configs
from pbtools.experiments.configs import Design, Execution, Plan, Reading, options_from
from pbtools.measures import names
from pbtools.measures.names import measure_column, measure_list, parse_all


@pytest.fixture(scope="module")
def tiny():
    c = synth.generate(topics=4, runs=4, orgs=2, docs=60, run_length=12, depth=5, seed=3)
    return c.runs, c.qrels, c.orgs


def test_option_objects_are_frozen_and_normalised():
    d = Design(leave_out=["org"], run_sets="all", estimators=["reduced"])
    assert (d.leave_out, d.run_sets, d.estimators) == (("org",), ("all",), ("reduced",))
    assert Design(pooled=["b", "a"], depth=5).pooled == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.leave_out = ("run",)
    assert Reading(float32=True).kwargs() == {"lenient": False, "float32": True, "run_id": "tag"}
    assert Execution().jobs is None


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: Design(leave_out=["team"]), "leave_out must be one of org, run"),
        (lambda: Design(leave_out=[]), "leave_out needs at least one"),
        (lambda: Design(run_sets=["all", "all"]), "run_sets lists a value twice"),
        (lambda: Design(fraction=0), "fraction must be in (0, 1]"),
        (lambda: Design(alpha=1.0), "alpha must be in (0, 1)"),
        (lambda: Design(top_ties="random"), "top_ties must be one of order"),
        (lambda: Design(pooled=["a"]), "pooled needs depth"),
        (lambda: Design(depth=0), "depth must be an integer >= 1"),
        (lambda: Reading(run_id="path"), "run_id must be one of tag, file"),
        (lambda: Execution(jobs=-2), "jobs must be an integer >= 1"),
        (lambda: Execution(jobs=1.5), "jobs must be an integer >= 1"),
        (lambda: Execution(dask=" "), "dask needs a scheduler address"),
    ],
)
def test_option_objects_refuse_what_cannot_apply(make, words):
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_keywords_fill_the_objects_and_clash_with_an_object_given():
    got = options_from({}, {"leave_out": ["run"], "lenient": True, "jobs": 1, "alpha": 0.01})
    assert got["design"] == Design(leave_out=["run"], alpha=0.01)
    assert got["reading"] == Reading(lenient=True) and got["execution"] == Execution(jobs=1)
    with pytest.raises(InputError, match="leave_out is a field of design="):
        options_from({"design": Design()}, {"leave_out": ["org"]})
    with pytest.raises(InputError, match="jobs is a field of execution="):
        options_from({"execution": Execution()}, {"jobs": 2})
    with pytest.raises(InputError, match="design= must be a Design"):
        options_from({"design": {"leave_out": ["org"]}}, {})
    with pytest.raises(TypeError, match="unexpected keyword argument 'levae_out'"):
        options_from({}, {"levae_out": ["org"]})


def test_the_scheduler_plans_threads_processes_and_dask(monkeypatch):
    big = 100 * configs.MIN_ROWS_PER_JOB
    assert Execution(jobs=1).plan(4, big) == Plan(1, 1, None)
    monkeypatch.setattr("pbtools.threads.max_threads", lambda: 16)
    monkeypatch.setattr(configs, "max_threads", lambda: 16)
    # up to CORES_PER_PROCESS cores: this process's threads; beyond: one worker per that many
    assert Execution(jobs=configs.CORES_PER_PROCESS).plan(4, big) == Plan(
        1, configs.CORES_PER_PROCESS, None
    )
    assert Execution(jobs=16).plan(4, big) == Plan(4, 4, None)
    assert Execution(jobs=16).plan(2, big) == Plan(2, 8, None)  # at most one per task
    assert Execution(jobs=16).plan(4, configs.MIN_ROWS_PER_JOB) == Plan(1, 16, None)  # few rows
    assert Execution(jobs=64).plan(4, big).note == "only 16 usable cores"
    assert Execution(jobs=3, dask="tcp://x:8786").plan(4, 10) == Plan(3, 1, None)
    assert Execution(dask="tcp://x:8786").plan(4, 10) == Plan(4, 1, None)
    assert Execution(jobs=1).cores == 1 and Execution(dask="tcp://x:8786").cores == 16


def test_limits_cap_this_process_threads():
    from pbtools.threads import max_threads

    before = max_threads()
    with Execution(jobs=1).limits():
        assert max_threads() == 1
    assert max_threads() == before


def test_measure_column_and_measure_list_take_parsed_measures_only():
    ms = parse_all(["P_10", "map"])
    assert measure_column(ms) == ["P@10", "AP"] and measure_list(ms, "x") == ms
    with pytest.raises(TypeError, match="Problem.own takes parsed measures"):
        measure_list(["P@10"], "Problem.own")


def _count_string_parses(monkeypatch) -> list:
    seen: list = []
    parse = names.parse

    def counting(name):
        if not isinstance(name, names.Measure):
            seen.append(name)
        return parse(name)

    monkeypatch.setattr(names, "parse", counting)
    return seen


def test_analyze_parses_its_measures_once(tiny, monkeypatch):
    seen = _count_string_parses(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the simple keyword call stays warning-free
        a = pbtools.analyze(
            tiny, measures=["P@5", "P_10"], leave_out=["org"], run_sets=["all"], progress=False
        )
    assert seen == ["P@5", "P_10"]  # then Measure objects down to the kernels
    assert sorted(a.errors["measure"].unique()) == ["P@10", "P@5"]
    assert a.params["measures"] == ["P@5", "P@10"]


def test_a_skipped_measure_is_announced_at_the_callers_line(tiny):
    with pytest.warns(UserWarning, match="lipani estimator skips AP") as got:
        pbtools.analyze(tiny, measures=["AP"], leave_out=["org"], run_sets=["all"], jobs=1)
    assert [w.filename for w in got] == [__file__]


def test_analyze_takes_the_option_objects(tiny):
    a = pbtools.analyze(
        tiny,
        measures=parse_all(["P@5"]),
        design=Design(leave_out=["run"], run_sets=["all"], estimators=["reduced"]),
        execution=Execution(jobs=1, progress=False),
    )
    assert a.errors[["leave_out", "estimator"]].drop_duplicates().to_numpy().tolist() == [
        ["run", "reduced"]
    ]
    with pytest.raises(InputError, match="run_sets is a field of design="):
        pbtools.analyze(tiny, design=Design(), run_sets=["all"])
    with pytest.raises(InputError, match="run_id='file' cannot apply with protocol"):
        pbtools.analyze(tiny, protocol="lipani2015", run_id="file")


def test_correct_parses_its_measures_once(tiny, monkeypatch):
    runs, qrels, orgs = tiny
    name = sorted(runs["name"].unique())[-1]
    pool = (runs[runs["name"] != name], qrels, orgs)
    new = runs[runs["name"] == name]
    seen = _count_string_parses(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skipped measures, extrapolations
        out = pbtools.correct(new, pool, ["P@5", "AP"], n_boot=2, jobs=1, prediction=False)
    assert seen == ["P@5", "AP"]  # the prediction intervals read their frames' measure column
    assert set(out["measure"]) == {"P@5", "AP"}


def test_correct_and_reproduce_run_under_the_one_scheduler(tiny, monkeypatch):
    from pbtools.experiments.analysis import SAMPLE
    from pbtools.threads import max_threads

    runs, qrels, orgs = tiny
    with pytest.raises(InputError, match="jobs must be an integer >= 1"):
        pbtools.correct(runs[runs["name"] == "x"], tiny, ["P@5"], jobs=-1)
    with pytest.raises(InputError, match="jobs must be an integer >= 1"):
        pbtools.reproduce("buckley2006", SAMPLE, jobs=-1)
    seen = []
    monkeypatch.setattr(
        "pbtools.experiments.new_run.correct_runs",
        lambda *a, **k: seen.append(max_threads()) or (_ for _ in ()).throw(KeyError("stop")),
    )
    name = sorted(runs["name"].unique())[-1]
    with pytest.raises(KeyError, match="stop"):
        pbtools.correct(
            runs[runs["name"] == name],
            (runs[runs["name"] != name], qrels, orgs),
            ["P@5"],
            jobs=1,
            prediction=False,
            n_boot=2,
        )
    assert seen == [1]  # the estimators ran on the one core granted
