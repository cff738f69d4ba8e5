"""The Python API's input contract (issue 24 item 5): every public entry checks its frames once.

Each check is run at each boundary: required columns, ids as strings, integer labels without
NaN, no repeated (qid, docno) rows (or repaired and reported under ``lenient=True``), and unknown
keyword arguments raising ``TypeError``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pbtools
from pbtools import corrections, io, measures, pooling, synth
from pbtools.corrections import ReducedPool, WebberCommonTopics
from pbtools.experiments.analysis import SAMPLE
from pbtools.frames import TrecFormatWarning, judge
from pbtools.pooling import Pool
from pbtools.validation import FrameError, check_frame

C = synth.generate(topics=4, runs=4, orgs=2, docs=80, run_length=20, depth=5, seed=3)
NEW = "o02r2"


def plain(df: pd.DataFrame) -> pd.DataFrame:
    """A frame as a user builds it: ids as plain strings, a fresh index."""
    ids = {c: str for c in ("name", "qid", "docno", "org") if c in df.columns}
    return df.astype(ids).reset_index(drop=True)


RUNS = plain(C.runs[C.runs["name"] != NEW])
NEW_RUN = plain(C.runs[C.runs["name"] == NEW])
QRELS = plain(C.qrels)
ORGS = plain(C.orgs)


def frames() -> dict[str, pd.DataFrame]:
    judged = judge(RUNS, QRELS)
    per_topic = measures.evaluate(RUNS, QRELS, ["P@5"], per_topic=True)
    return {
        "runs": RUNS,
        "new": NEW_RUN,
        "qrels": QRELS,
        "orgs": ORGS,
        "judged": judged,
        "results": plain(per_topic),
    }


def _est():
    return ReducedPool(measures=["P@5"], depth=5)


def _webber_topics(f, **kw):
    est = WebberCommonTopics(measures=["P@5"], n_boot=5).fit(f["runs"], f["qrels"], **kw)
    return est.predict(f["new"], f["qrels"], **kw)


#: boundary -> (call on the frames, the frames it takes, whether it has ``lenient``)
BOUNDARIES = {
    "measures.evaluate": (
        lambda f, **kw: measures.evaluate(f["runs"], f["qrels"], ["P@5", "NumRet"], **kw),
        ("runs", "qrels"),
        True,
    ),
    "pbtools.correct": (
        lambda f, **kw: pbtools.correct(
            f["new"],
            (f["runs"], f["qrels"], f["orgs"]),
            ["P@5"],
            estimators=("reduced", "lipani"),
            n_boot=3,
            depth=5,
            progress=False,
            **kw,
        ),
        ("new", "runs", "qrels", "orgs"),
        True,
    ),
    "corrections.correct": (
        lambda f, **kw: corrections.correct(
            f["new"], (f["runs"], f["qrels"], f["orgs"]), ["P@5"], depth=5, **kw
        ),
        ("new", "runs", "qrels", "orgs"),
        True,
    ),
    "Estimator.fit": (
        lambda f, **kw: _est().fit(f["runs"], f["qrels"], f["orgs"], **kw).predict(NEW_RUN),
        ("runs", "qrels", "orgs"),
        True,
    ),
    "Estimator.predict": (
        lambda f, **kw: _est().fit(RUNS, QRELS, ORGS).predict(f["new"], **kw),
        ("new",),
        True,
    ),
    "WebberCommonTopics.fit/predict": (_webber_topics, ("runs", "new", "qrels"), True),
    "pooling.pool": (lambda f, **kw: pooling.pool(f["runs"], 5, **kw), ("runs",), False),
    "pooling.repool": (
        lambda f, **kw: pooling.repool(f["runs"], f["qrels"], 5, **kw),
        ("runs", "qrels"),
        False,
    ),
    "pooling.contributions": (
        lambda f, **kw: pooling.contributions(f["runs"], 5, "org", f["orgs"], **kw),
        ("runs", "orgs"),
        False,
    ),
    "pooling.leave_one_out": (
        lambda f, **kw: pooling.leave_one_out(f["runs"], f["qrels"], 5, "org", f["orgs"], **kw),
        ("runs", "qrels", "orgs"),
        False,
    ),
    "pooling.take_teams": (
        lambda f, **kw: pooling.take_teams(f["runs"], f["qrels"], 5, orgs=f["orgs"], **kw),
        ("runs", "qrels", "orgs"),
        False,
    ),
    "pooling.shallow": (
        lambda f, **kw: pooling.shallow(f["runs"], f["qrels"], [2, 1], **kw),
        ("runs", "qrels"),
        False,
    ),
    "pooling.subset_pool": (
        lambda f, **kw: pooling.subset_pool(f["runs"], f["qrels"], 5, size=2, n=2, **kw),
        ("runs", "qrels"),
        False,
    ),
    "pooling.unique_contributions": (
        lambda f, **kw: pooling.unique_contributions(f["runs"], f["qrels"], f["orgs"], 5, **kw),
        ("runs", "qrels", "orgs"),
        False,
    ),
    "pooling.infer_pool": (
        lambda f, **kw: pooling.infer_pool(f["runs"], f["qrels"], **kw),
        ("runs", "qrels"),
        False,
    ),
    "pooling.judged_prefixes": (
        lambda f, **kw: pooling.judged_prefixes(f["runs"], f["qrels"], **kw),
        ("runs", "qrels"),
        False,
    ),
    "pooling.unit_map": (
        lambda f, **kw: pooling.unit_map(["o01r1"], "org", f["orgs"], **kw),
        ("orgs",),
        False,
    ),
    "Pool.from_depth": (
        lambda f, **kw: Pool.from_depth(f["runs"], f["qrels"], 5, **kw).leave_out("run"),
        ("runs", "qrels"),
        False,
    ),
    "Pool.simulate": (
        lambda f, **kw: Pool.simulate(f["runs"], f["qrels"], "take", budget=5, **kw),
        ("runs", "qrels"),
        False,
    ),
    "accessor.judge": (
        lambda f, **kw: f["runs"].pb.judge(f["qrels"], **kw),
        ("runs", "qrels"),
        True,
    ),
    "accessor.evaluate": (
        lambda f, **kw: f["runs"].pb.evaluate(f["qrels"], ["P@5", "NumRet"], **kw),
        ("runs", "qrels"),
        True,
    ),
    "accessor.trec_order": (lambda f, **kw: f["runs"].pb.trec_order(**kw), ("runs",), False),
    "accessor.top": (lambda f, **kw: f["runs"].pb.top(2, **kw), ("runs",), False),
    "accessor.measure": (
        lambda f, **kw: f["judged"].pb.measure("P@5", qrels=f["qrels"], **kw),
        ("judged", "qrels"),
        False,
    ),
    "pbtools.compare": (
        lambda f, **kw: pbtools.compare(f["results"], tests=("t",), **kw),
        ("results",),
        False,
    ),
}


def _int_qid(df):
    return df.assign(qid=df["qid"].astype(str).str.lstrip("0").astype(np.int64))


def _repeat_first(df):
    return pd.concat([df, df.iloc[:1]], ignore_index=True)


def _first_label(value):
    def corrupt(df):
        label = df["label"].astype(np.float64).to_numpy().copy()
        label[0] = value
        return df.assign(label=label)

    return corrupt


def _no_first_id(df):
    qid = df["qid"].astype(object).to_numpy().copy()
    qid[0] = None
    return df.assign(qid=qid)


RUN_CHECKS = {
    "missing column": (lambda df: df.drop(columns="docno"), r"lacks column\(s\) docno"),
    "integer ids": (_int_qid, r"qid is int64, but ids are strings .*astype\(\{'qid': str\}\)"),
    "missing id": (_no_first_id, r"qid has 1 missing value"),
    "repeated row": (_repeat_first, r"1 repeated \(name, qid, docno\) row"),
}
CHECKS = {
    "runs": RUN_CHECKS,
    "new": RUN_CHECKS,
    "judged": RUN_CHECKS,
    "qrels": {
        "missing column": (lambda df: df.drop(columns="label"), r"lacks column\(s\) label"),
        "integer ids": (_int_qid, r"qid is int64, but ids are strings"),
        "fractional label": (_first_label(0.5), r"label 0\.5 .* is not an integer"),
        "NaN label": (_first_label(np.nan), r"label has 1 missing value\(s\) \(NaN\)"),
        "label out of range": (_first_label(40000), r"label 40000 .* outside the 16-bit"),
        "repeated row": (_repeat_first, r"1 repeated \(qid, docno\) row"),
    },
    "orgs": {
        "missing column": (lambda df: df.drop(columns="org"), r"lacks column\(s\) org"),
        "integer ids": (
            lambda df: df.assign(name=np.arange(len(df))),
            r"name is int64, but ids are strings",
        ),
    },
    "results": {
        "missing column": (lambda df: df.drop(columns="value"), r"lacks column\(s\) value"),
        "integer ids": (_int_qid, r"qid is int64, but ids are strings"),
        "repeated row": (_repeat_first, r"1 repeated \(measure, name, qid\) row"),
    },
}
# the pool inference reads no labels: its qrels may lack them
SKIP = {("pooling.infer_pool", "qrels", "missing column")}
SKIP |= {("pooling.judged_prefixes", "qrels", "missing column")}

CASES = [
    pytest.param(b, target, check, id=f"{b}-{target}-{check.replace(' ', '_')}")
    for b, (_, targets, _) in BOUNDARIES.items()
    for target in targets
    for check in CHECKS[target]
    if (b, target, check) not in SKIP
]


@pytest.mark.parametrize(("boundary", "target", "check"), CASES)
def test_every_check_at_every_boundary(boundary, target, check):
    call, _, _ = BOUNDARIES[boundary]
    corrupt, message = CHECKS[target][check]
    f = frames()
    f[target] = corrupt(f[target])
    with pytest.raises(FrameError, match=message) as err:
        call(f)
    assert str(err.value).split(":")[0] in {"runs", "new_run", "qrels", "orgs", "df"} | {
        "pooled_runs",
        "new_runs",
        "common_qrels",
        "per_topic",
        "collection[0]",
        "collection[1]",
        "collection[2]",
    }


@pytest.mark.parametrize("boundary", list(BOUNDARIES))
def test_clean_frames_pass_every_boundary(boundary):
    call, _, _ = BOUNDARIES[boundary]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrecFormatWarning)
        call(frames())


@pytest.mark.parametrize("boundary", list(BOUNDARIES))
def test_unknown_keyword_arguments_raise_type_error(boundary):
    call, _, _ = BOUNDARIES[boundary]
    with pytest.raises(TypeError, match="bogus"):
        call(frames(), bogus=1)


@pytest.mark.parametrize(
    "call",
    [
        lambda kw: pbtools.correct(NEW_RUN, (RUNS, QRELS, ORGS), ["P@5"], n_boot=2, **kw),
        lambda kw: corrections.correct(NEW_RUN, (RUNS, QRELS, ORGS), ["P@5"], depth=5, **kw),
        lambda kw: corrections.estimate(RUNS, NEW_RUN, QRELS, depth=5, measures=["P@5"], **kw),
    ],
    ids=["pbtools.correct", "corrections.correct", "corrections.estimate"],
)
def test_misspelt_keyword_of_a_choices_sink_is_refused(call):
    """``**choices`` used to swallow any name: ``estimator=`` (for ``estimators=``) was ignored."""
    with pytest.raises(TypeError, match="'estimator'.*nor a choice"):
        call({"estimator": "lipani"})


LENIENT = [
    pytest.param(b, target, id=f"{b}-{target}")
    for b, (_, targets, lenient) in BOUNDARIES.items()
    if lenient
    for target in targets
    if target in ("runs", "new", "qrels")
]


@pytest.mark.parametrize(("boundary", "target"), LENIENT)
def test_lenient_repairs_repeats_and_says_how_many(boundary, target):
    call, _, _ = BOUNDARIES[boundary]
    clean = call(frames())
    f = frames()
    f[target] = pd.concat([f[target], f[target].iloc[:3]], ignore_index=True)
    with pytest.warns(TrecFormatWarning, match=r"3 repeated .* dropped under lenient=True"):
        repaired = call(f, lenient=True)
    if isinstance(clean, pd.DataFrame):
        pd.testing.assert_frame_equal(repaired.reset_index(drop=True), clean.reset_index(drop=True))


def test_repeated_documents_were_counted_and_now_are_not():
    """The issue's NumRet 100 → 105: five repeated rows were counted as retrieved."""
    runs = pd.concat([RUNS, RUNS.iloc[:5]], ignore_index=True)
    with pytest.raises(FrameError, match="5 repeated"):
        measures.evaluate(runs, QRELS, ["NumRet"])
    with pytest.warns(TrecFormatWarning):
        got = measures.evaluate(runs, QRELS, ["NumRet"], lenient=True)
    want = measures.evaluate(RUNS, QRELS, ["NumRet"])
    assert got["value"].tolist() == want["value"].tolist()


def test_integer_qids_are_refused_not_all_nan():
    """Integer qids of a new run never matched the collection's '001' and gave NaN scores."""
    with pytest.raises(FrameError, match=r"runs: qid is int64.*runs\.astype"):
        pbtools.correct(_int_qid(NEW_RUN), (RUNS, QRELS, ORGS), ["P@5"], n_boot=2, depth=5)


def test_lenient_run_rule_is_the_readers_rule():
    """Highest score kept, the first on equal scores, NaN losing to any number."""
    run = pd.DataFrame(
        {
            "name": "a",
            "qid": "1",
            "docno": ["d1", "d2", "d1", "d3", "d3", "d2"],
            "score": [1.0, np.nan, 5.0, 2.0, 2.0, 0.5],
            "tag": ["x1", "n", "x2", "e1", "e2", "y"],
        }
    )
    with pytest.warns(TrecFormatWarning, match="3 repeated"):
        out = check_frame(run, "run", lenient=True)
    assert sorted(out["tag"]) == ["e1", "x2", "y"]


def test_lenient_qrels_keep_the_first_judgment():
    qrels = pd.DataFrame({"qid": "1", "docno": ["d1", "d2", "d1"], "label": [2, 0, 0]})
    with pytest.warns(TrecFormatWarning, match="1 repeated"):
        out = check_frame(qrels, "qrels", lenient=True)
    assert out["label"].tolist() == [2, 0]


@pytest.mark.parametrize(
    ("qid", "accepted"),
    [
        (pd.Series(["1", "2"]), True),
        (pd.Series(["1", "2"], dtype=object), True),
        (pd.Series(["1", "2"], dtype="string"), True),
        (pd.Series(["1", "2"]).astype("category"), True),
        (pd.Series([1.0, 2.0]), False),
        (pd.Series([1, "2"], dtype=object), False),
        (pd.Series([1, 2]).astype("category"), False),
        (pd.Series([True, False]), False),
    ],
)
def test_id_dtypes(qid, accepted):
    qrels = pd.DataFrame({"qid": qid, "docno": ["a", "b"], "label": [1, 0]})
    if accepted:
        assert check_frame(qrels, "qrels") is qrels
    else:
        with pytest.raises(FrameError, match="but ids are strings"):
            check_frame(qrels, "qrels")


@pytest.mark.parametrize(
    ("label", "accepted"),
    [
        ([1, 0], True),
        ([1.0, 0.0], True),
        ([True, False], True),
        (pd.array([1, 0], dtype="Int16"), True),
        (pd.array([1, None], dtype="Int16"), False),
        (["1", "0"], False),
        ([1.5, 0.0], False),
        ([-40000, 0], False),
    ],
)
def test_label_dtypes(label, accepted):
    qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "label": label})
    if accepted:
        assert check_frame(qrels, "qrels") is qrels
    else:
        with pytest.raises(FrameError, match="label"):
            check_frame(qrels, "qrels")


def test_judged_frames_may_hold_unjudged_rows():
    judged = judge(RUNS, QRELS)
    assert judged["label"].isna().any()
    assert check_frame(judged, "judged") is judged


def test_key_columns_separate_variants():
    """A leave-out frame repeats (qid, docno) once per ``left_out``: that is no repeat."""
    reduced = pooling.leave_one_out(RUNS, QRELS, 5)
    assert check_frame(reduced, "qrels", keys=["left_out"]) is reduced
    with pytest.raises(FrameError, match="repeated"):
        check_frame(reduced, "qrels")
    got = measures.evaluate(RUNS, reduced, ["P@5"], keys=["left_out"])
    assert set(got["left_out"].astype(str)) == set(RUNS["name"])


def test_readers_frames_pass_unchanged():
    c = io.load_collection([SAMPLE])
    assert check_frame(c.runs, "run") is c.runs
    assert check_frame(c.qrels, "qrels") is c.qrels
    assert check_frame(c.orgs, "orgs") is c.orgs


def test_the_frames_are_checked_once_per_call(monkeypatch):
    """Calls a validated function makes inside pbtools are not validated again."""
    from pbtools import validation

    seen = []
    real = validation.check_frame

    def counting(df, kind, **kw):
        seen.append((kw.get("argument"), kind))
        return real(df, kind, **kw)

    monkeypatch.setattr(validation, "check_frame", counting)
    pbtools.correct(NEW_RUN, (RUNS, QRELS, ORGS), ["P@5"], n_boot=2, depth=5, progress=False)
    assert sorted(seen) == [
        ("collection[0]", "run"),
        ("collection[1]", "qrels"),
        ("collection[2]", "orgs"),
        ("runs", "run"),
    ]
    seen.clear()
    measures.evaluate(RUNS, QRELS, ["P@5"])
    measures.evaluate(RUNS, QRELS, ["P@5"])  # a second top-level call is checked again
    assert seen == [("runs", "run"), ("qrels", "qrels")] * 2


def test_frame_error_is_an_input_error():
    err = FrameError("qid is int64", "runs")
    assert isinstance(err, ValueError) and isinstance(err, pbtools.TrecFormatError)
    assert str(err) == "runs: qid is int64" and err.argument == "runs" and err.file is None
