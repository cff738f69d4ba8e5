"""The small-sample bias of infAP and xinfAP is the estimators' own, not pbtools': over every
sample of a tiny universe (``benchmarks/sampled_bias.py``), the numerators are exactly as biased
as the smoothing prior says (infAP: the closed form; statAP: not at all), so what is left is the
ratio to a random denominator."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location(
        "sampled_bias", REPO / "benchmarks" / "sampled_bias.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sampled_bias"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_infap_numerator_bias_is_the_smoothing_prior(bench):
    rng = np.random.default_rng(11)
    ranking, labels = bench.universe(rng, 8, 2, 0.4)
    R = sum(v >= 1 for v in labels.values())
    for n in (2, 4):
        est, ap = bench.enumerate_topic(ranking, labels, [list(labels)], [n])
        assert len(est) == len(list(bench.samples([list(labels)], [n])))
        ht = (est["infAP"] * est["r_s"]).mean() / (R * n / 8)
        closed = bench.infap_smoothing_closed_form(ranking, labels, n)
        assert abs(ht - ap - closed) < 1e-4  # ε = 1e-5 in every ratio: not exactly 0
        assert abs(closed) > 1e-3  # the prior matters on this ranking
        assert abs(est["infAP"].mean() - ht) > 1e-3  # and so does the ratio


def test_statap_numerator_is_exactly_unbiased(bench):
    rng = np.random.default_rng(12)
    ranking, labels = bench.universe(rng, 8, 2, 0.4)
    in_rank = [d for d in ranking if d in labels]
    est, ap = bench.enumerate_topic(ranking, labels, [in_rank[:3], in_rank[3:]], [2, 2])
    R = sum(v >= 1 for v in labels.values())
    assert abs((est["statAP"] * est["infNumRel"]).mean() / R - ap) < 1e-12
    assert abs(est["infNumRel"].mean() - R) < 1e-12
    # xinfAP's numerator is not (its 1/3 prior where a stratum above has no sampled document)
    assert abs((est["xinfAP"] * est["infNumRel"]).mean() / R - ap) > 1e-4
