"""Algorithm 1 of Lipani et al. 2015 at its two boundaries, by hand.

The paper (``../shared/papers/lipani2015-splitting-water.md``, Eq. 3 and Algorithm 1): with
s = P@n, s̄ = P̄@n, k̄ = 1 − s − s̄ of the unpooled run and ΔP, ΔP̄, Δk the means over the pooled
runs of the changes their merge with it causes (δk = −δP − δP̄),
λ = k̄·(ΔP·s̄ − ΔP̄·s); "if λ > 0 then" the score is s + k̄·max(Δk, 0), else s.

Each case sits where a plausible slip changes the answer: λ = 0 with Δk > 0 (``λ >= 0`` would
correct a run the paper leaves alone) and λ > 0 with Δk < 0 (without the clamp the "correction"
would lower the score below its lower bound s).
"""

import numpy as np
import pandas as pd
import pytest

from pbtools.corrections import correct


def run(name, docs):
    return pd.DataFrame(
        {"name": name, "qid": "1", "docno": list(docs), "score": np.arange(len(docs), 0, -1.0)}
    )


def lipani(new, pooled, qrels, n, depth):
    res = correct(new, (pooled, qrels), [f"P@{n}"], depth=depth, estimators=("lipani",))
    assert len(res) == 1
    return res.iloc[0]


def test_lambda_zero_does_not_fire():
    """u = x y a, its top 2 unjudged: s = s̄ = 0, k̄ = 1, so λ = 1·(ΔP·0 − ΔP̄·0) = 0.

    p = a b c (a relevant, b not, c unjudged). The merge keeps p's documents, a at u's rank 3:
    b c a, top 2 = b c → P 0, P̄ .5 against p's a b → P .5, P̄ .5: δP = −.5, δP̄ = 0, δk = .5.
    Δk > 0, but λ = 0 is not > 0: the paper leaves the score at s = 0 (a `λ >= 0` would give
    0 + 1·.5)."""
    qrels = pd.DataFrame({"qid": "1", "docno": list("ab"), "label": [1, 0]})
    r = lipani(run("u", "xya"), run("p", "abc"), qrels, n=2, depth=3)
    assert (r["P"], r["AntiP"], r["k"]) == (0.0, 0.0, 1.0)
    assert (r["dP"], r["dAntiP"], r["dk"]) == (-0.5, 0.0, 0.5)
    assert r["lam"] == 0.0
    assert not bool(r["fired"])
    assert r["adjustment"] == 0.0 and r["value"] == 0.0


def test_negative_delta_k_is_clamped():
    """u = a e y at n = 3 (a relevant, e not, y unjudged): s = s̄ = k̄ = 1/3.

    p = b c d a (b not relevant, c d unjudged): its top 3 b c d → P 0, P̄ 1/3. The merge puts a
    at u's rank 1: a b c → P 1/3, P̄ 1/3: δP = 1/3, δP̄ = 0, δk = −1/3. λ = 1/3·(1/3·1/3 − 0)
    = 1/27 > 0 fires, and the score is s + k̄·max(Δk, 0) = s = 1/3 (without the clamp:
    1/3 − 1/9 = 2/9, below the lower bound s)."""
    qrels = pd.DataFrame({"qid": "1", "docno": list("abe"), "label": [1, 0, 0]})
    r = lipani(run("u", "aey"), run("p", "bcda"), qrels, n=3, depth=4)
    third = pytest.approx(1 / 3, abs=1e-15)
    assert (r["P"], r["AntiP"], r["k"]) == (third, third, third)
    assert (r["dP"], r["dAntiP"], r["dk"]) == (third, 0.0, pytest.approx(-1 / 3, abs=1e-15))
    assert r["lam"] == pytest.approx(1 / 27, abs=1e-15)
    assert bool(r["fired"])
    assert r["adjustment"] == 0.0
    assert r["value"] == pytest.approx(1 / 3, abs=1e-15)
