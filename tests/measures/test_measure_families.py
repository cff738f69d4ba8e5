"""Measure families (``pbtools/measures/registry.py``): one declaration per measure, read by the
parser, trec_eval's names, the CLI help and the engine's depth."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pandas as pd
import pytest

from pbtools import measures
from pbtools.engine.build import from_frames
from pbtools.errors import InputError
from pbtools.measures import kernels as K
from pbtools.measures.registry import FAMILIES, family, family_of, unregister
from pbtools.measures.sampled import SAMPLED


def _run(name, docs, qid="1"):
    n = len(docs)
    return pd.DataFrame(
        {"name": name, "qid": qid, "docno": list(docs), "score": np.arange(n, 0, -1.0)}
    )


POOLED = pd.concat([_run("p1", "abcdef"), _run("p2", "badcfe")])
NEW = pd.concat([_run("u", "xaybzc"), _run("v", "fedcba")])
QRELS = pd.DataFrame({"qid": "1", "docno": list("abcdf"), "label": [1, 0, 1, 0, 1]})


def _lookahead(view, topics, gt, m):
    """Lookahead@n = the relevant documents in the top 2n ÷ 2n: it reads past its cut-off."""
    return view.upto(view.rel(m.rel), 2 * m.cutoff) / (2 * m.cutoff), None


@pytest.fixture
def lookahead():
    """The family declared with the ranks it reads (2n); removed afterwards."""
    yield family("Lookahead", _lookahead, cutoff="required", depth=lambda m: 2 * m.cutoff)
    unregister("Lookahead")


def test_a_family_reading_past_its_cutoff_is_scored_alike_by_evaluate_and_the_estimators(
    lookahead,
):
    ms = ["Lookahead@2", "P@2"]
    ev = measures.evaluate(NEW, QRELS, ms, warn=False)
    by_eval = ev.set_index(["name", "measure"])["value"]
    # the top 4: u = x a y b (a relevant) → 1/4; v = f e d c (f, c relevant) → 2/4
    assert by_eval[("u", "Lookahead@2")] == 0.25 and by_eval[("v", "Lookahead@2")] == 0.5
    assert K.depth_needed(measures.parse_all(ms)) == 4
    problem = from_frames(POOLED, NEW, QRELS, depth=2)
    own = problem.own(measures.parse_all(ms))  # the estimators' engine: cut at depth_needed
    names = list(problem.enc.names[problem.new])
    for i, name in enumerate(names):
        for j, m in enumerate(ms):
            assert own[i, j] == by_eval[(name, m)], (name, m)


def test_an_undeclared_depth_is_the_cutoff_in_both_paths():
    """Declared without ``depth``, the same kernel reads only the top n — in evaluate too."""
    family("Shallow", _lookahead, cutoff="required")
    try:
        ev = measures.evaluate(NEW, QRELS, ["Shallow@2"], warn=False)
        own = from_frames(POOLED, NEW, QRELS, depth=2).own(measures.parse_all(["Shallow@2"]))
        # the top 2 only: u = x a → 1/4, v = f e → 1/4 (not v's 2/4 of the top 4)
        assert ev["value"].tolist() == own[:, 0].tolist() == [0.25, 0.25]
        assert K.depth_needed(measures.parse_all(["Shallow@2"])) == 2
    finally:
        unregister("Shallow")


def test_depth_is_none_for_a_condensed_list_or_no_cutoff():
    assert K.depth_needed(measures.parse_all(["P@5", "AP"])) is None
    assert K.depth_needed(measures.parse_all(["P(judged_only=True)@5"])) is None
    assert K.depth_needed(measures.parse_all(["P@5", "nDCG@20", "Relstring"])) == 20


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_family_declares_a_formula_and_round_trips_its_names(name):
    f = FAMILIES[name]
    if name not in SAMPLED:  # those are estimated outside the engine (measures/sampled.py)
        assert f.formula, f"{name}: the kernel's docstring is its formula"
    spelled = {"required": f"{name}@10", "optional": name, "none": name}[f.cutoff]
    if f.at:
        spelled = f"{name}@0.5"
    m = measures.parse(spelled)
    assert m.family is f and measures.parse(str(m)) == m
    assert measures.parse(m.trec_name) == m  # trec_eval's name, or pbtools' when it has none
    for template, fixed in f.templates():  # every trec_eval name is read back to its family
        text = template.replace("{cutoff}", "20").replace("{mult:.2f}", "0.20")
        text = text.replace("{recall:.2f}", "0.50")
        back = measures.parse(text)
        assert back.base == name and back.trec_name == text, (text, back)
        for key, value in fixed.items():  # the parameters the name fixes
            got = getattr(back, key) if key in ("cutoff", "p") else back.get(key)
            assert got == value, (text, key)


def test_families_and_aliases_are_read_case_insensitively():
    assert family_of("map").name == "AP" and family_of("mrr").name == "RR"
    assert str(measures.parse("ndcg@10")) == "nDCG@10"
    with pytest.raises(InputError, match="unknown measure 'Nope'"):
        family_of("Nope")


def test_a_declaration_is_checked():
    with pytest.raises(InputError, match="cutoff must be"):
        family("Bad", _lookahead, cutoff="sometimes")
    with pytest.raises(InputError, match="unknown measure parameter"):
        family("Bad", _lookahead, params=("depthh",))
    with pytest.raises(InputError, match="unknown fields"):
        family("Bad", _lookahead, trec=("bad_{mult}",))
    assert "Bad" not in FAMILIES


def test_ranking_only_is_declared_per_measure():
    """P@n reads the labels only; P(relative=True)@n and graded RBP read the qrels too."""
    only = [measures.parse(n) for n in ("P@5", "RR", "RBP(p=0.8)@10")]
    assert not K.reads_relevance_set(only)
    for name in ("P(relative=True)@5", "RBP(p=0.9,graded=True)", "AP"):
        assert K.reads_relevance_set([measures.parse(name)]), name


def test_the_evaluate_help_lists_every_family_with_its_parameters():
    from pbtools.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["evaluate", "--help"]) == 0
    out = printed.getvalue()
    assert "RBP[@n]" in out and "p=0.8" in out and "trec_eval: P_n, relative_P_n" in out
    for name in FAMILIES:
        assert f"\n  {name}" in out, name
