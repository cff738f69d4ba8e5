"""What removing relevant documents from the judgments can and cannot do to a run's score.

An earlier test asserted that removing relevant documents (a team's unique contribution) can
never raise AP or bpref. It can: both divide by R, the number of relevant documents, so
removing a relevant document the run never retrieved raises both (0.5 → 1.0 below), and even
removing one the run retrieved low can raise AP. What does hold: measures that do not divide
by R (P@k, RBP, RR, DCG-like sums with unjudged = non-relevant) can only fall when relevant
documents become unjudged, whichever documents they are. The tests below construct both
cases.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pbtools import measures

#: measures of a single ranking that do not divide by R: removing relevant documents cannot
#: raise them
MONOTONE = ["P@5", "P@10", "RBP(p=0.8)@10", "RR"]


def _run(docs) -> pd.DataFrame:
    n = len(docs)
    return pd.DataFrame(
        {"name": "r", "qid": "1", "docno": list(docs), "score": np.arange(n, 0, -1, dtype=float)}
    )


def _qrels(rel, nonrel=()) -> pd.DataFrame:
    docs = list(rel) + list(nonrel)
    return pd.DataFrame({"qid": "1", "docno": docs, "label": [1] * len(rel) + [0] * len(nonrel)})


def _score(run, qrels, m) -> float:
    return float(measures.evaluate(run, qrels, [m], warn=False)["value"].iloc[0])


def test_removing_an_unretrieved_relevant_document_raises_ap_and_bpref():
    """The run retrieves d1 (relevant) only; d2 (relevant) is not retrieved. AP = bpref = 1/2;
    without d2's judgment R = 1 and both are 1: removing relevance raised the score."""
    run = _run(["d1"])
    full, reduced = _qrels(["d1", "d2"]), _qrels(["d1"])
    for m in ("AP", "Bpref"):
        assert _score(run, full, m) == pytest.approx(0.5)
        assert _score(run, reduced, m) == pytest.approx(1.0)
    # P@1 does not move: it never counted d2
    assert _score(run, full, "P@1") == _score(run, reduced, "P@1") == 1.0


def test_removing_a_retrieved_relevant_document_can_raise_ap():
    """d2 retrieved at rank 4: AP = (1 + 2/4)/2 = .75; unjudged, AP = 1. P@4 falls .5 → .25."""
    run = _run(["d1", "n1", "n2", "d2"])
    full = _qrels(["d1", "d2"], ["n1", "n2"])
    reduced = _qrels(["d1"], ["n1", "n2"])
    assert _score(run, full, "AP") == pytest.approx(0.75)
    assert _score(run, reduced, "AP") == pytest.approx(1.0)
    assert _score(run, full, "P@4") == pytest.approx(0.5)
    assert _score(run, reduced, "P@4") == pytest.approx(0.25)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_removing_relevant_documents_never_raises_precision_like_measures(seed):
    """Random rankings and judgments over 30 topics; a random half of the relevant documents
    (retrieved or not) loses its judgment: P@k, RBP@10 and RR never rise, while AP and bpref
    rise on some topic (so the data can show a rise)."""
    rng = np.random.default_rng(seed)
    runs, qrels = [], []
    for q in range(30):
        docs = np.array([f"q{q}d{i}" for i in range(40)])
        ranked = rng.permutation(docs)[:20]
        runs.append(
            pd.DataFrame(
                {
                    "name": "r",
                    "qid": str(q),
                    "docno": ranked,
                    "score": np.arange(20, 0, -1, dtype=float),
                }
            )
        )
        labels = (rng.random(40) < 0.3).astype(int)
        labels[0] = 1  # every topic has a relevant document
        qrels.append(pd.DataFrame({"qid": str(q), "docno": docs, "label": labels}))
    run, full = pd.concat(runs, ignore_index=True), pd.concat(qrels, ignore_index=True)
    rel = full["label"] > 0
    keep = ~rel | (rng.random(len(full)) < 0.5)
    keep |= full["docno"].str.endswith("d0")  # each topic keeps one relevant document
    reduced = full[keep]
    ms = MONOTONE + ["AP", "Bpref"]
    a = measures.evaluate(run, full, ms, per_topic=True, warn=False)
    b = measures.evaluate(run, reduced, ms, per_topic=True, warn=False)
    both = a.merge(b, on=["name", "qid", "measure"], suffixes=("_full", "_reduced"))
    rise = both["value_reduced"] > both["value_full"] + 1e-12
    assert not rise[both["measure"].isin(MONOTONE)].any()
    assert rise[both["measure"] == "AP"].any() and rise[both["measure"] == "Bpref"].any()
