"""benchmarks/pairwise_reference.py (issue 30 item 3): the compiled reference of the pairwise
stage — Lipani's merges and Δ's, Webber & Park's losses — gives exactly pbtools' outputs, per
(pair, topic) and per run, on a small generated leave-one-organisation-out problem."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[2]

# compiling the kernels takes longer than the quick subset allows (cached afterwards)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ref():
    spec = importlib.util.spec_from_file_location(
        "pairwise_reference", ROOT / "benchmarks" / "pairwise_reference.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["pairwise_reference"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def problem(ref):
    from pbtools import synth

    c = synth.generate(topics=6, docs=300, runs=14, orgs=6, run_length=120, depth=20, seed=3)
    return ref.leave_org_out_problem(c.runs, c.qrels, c.orgs, c.pooled, c.depth)


@pytest.mark.parametrize("tie", ["exclusive_first", "lipani2015"])
@pytest.mark.parametrize("replace", [True, False])
def test_identical_to_pbtools(ref, problem, tie, replace):
    res = ref.compare(problem, tie=tie, replace=replace)
    assert len(res) == 10
    assert {k: v for k, v in res.items() if not v[0]} == {}


def test_the_comparison_can_fail(ref, problem):
    """The choices change the per-(pair, topic) outputs on this problem: an identity check
    against the wrong tie rule or inner pool fails."""
    a, b = ref.reference(problem), ref.reference(problem, tie="lipani2015")
    same = (a["merged_rows"] == b["merged_rows"]) | np.isnan(a["merged_rows"])
    assert not same.all()
    c = ref.reference(problem, replace=False)
    same = (a["loss_rows"] == c["loss_rows"]) | np.isnan(a["loss_rows"])
    assert not same.all()
    # rows exist and some lose something: the identity is not of empty tables
    assert np.isfinite(a["loss_rows"]).sum() > 1000 and (a["loss_rows"] > 0).sum() > 100
    assert np.isfinite(a["lipani"]).all() and (a["lipani"][:, :, 4] > 0).any()


def test_refuses_what_it_does_not_compute(ref, problem):
    with pytest.raises(ValueError, match="P@n only"):
        ref.reference(problem, ["P@5", "AP"])
