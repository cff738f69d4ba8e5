"""One frame per estimator and configuration (issue 30 item 5): a leave-out experiment joins
the estimators' columns (``Estimator.estimate_columns``) over its chunks of runs, and the frame
is the one of the chunks' frames concatenated, dtypes included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from pbtools import synth
from pbtools.corrections import Condensed, Lipani, ReducedPool, TrueScore, WebberOnRuns
from pbtools.corrections.base import RESULT_COLUMNS, Estimator, tidy
from pbtools.experiments import chunked
from pbtools.measures.names import parse_all


def _part(names, fired, n_pooled):
    return {
        "name": np.array(names),
        "estimator": "x",
        "value": np.linspace(0, 1, len(names)),
        "fired": fired,
        "n_pooled": n_pooled,
    }


CASES = {
    "same types": [
        _part(["a", "bb"], np.array([True, False]), np.array([1, 2])),
        _part(["ccc"], np.array([True]), np.array([3])),
    ],
    "bool and float, int and float": [
        _part(["a", "bb"], np.array([True, False]), np.array([1, 2])),
        _part(["ccc"], np.array([np.nan]), np.array([np.nan])),
    ],
    "an extension array": [
        _part(["a"], np.array([True]), pd.array([1], dtype="Int64")),
        _part(["b"], np.array([False]), pd.array([None], dtype="Int64")),
    ],
}


@pytest.mark.parametrize("case", list(CASES))
def test_joined_columns_are_the_chunks_frames_concatenated(case):
    parts = CASES[case]
    whole = pd.concat([pd.DataFrame(p) for p in parts], ignore_index=True)
    assert_frame_equal(chunked._joined(parts), whole, check_exact=True)


class OnlyEstimate(Estimator):
    """An estimator written as the docs show it: ``estimate`` alone, columns out of order."""

    name = "only"

    def estimate(self, problem, measures):
        return pd.DataFrame({"value": np.zeros(len(problem.new)), "name": problem.names})


@pytest.mark.parametrize(
    "cls", [ReducedPool, TrueScore, Condensed, WebberOnRuns, Lipani, OnlyEstimate]
)
def test_estimate_is_the_frame_of_estimate_columns(cls):
    col = synth.generate(topics=3, runs=4, orgs=2, docs=40, run_length=10, depth=5, seed=1)
    new = col.runs["name"] == col.runs["name"].iloc[0]
    ms = parse_all(["P@5"])
    est = cls(measures=ms, depth=5).fit(col.runs[~new], col.qrels)
    problem = est.problem(col.runs[new])
    cols = est.estimate_columns(problem, ms)
    assert tuple(cols) == RESULT_COLUMNS
    assert_frame_equal(pd.DataFrame(cols), tidy(est.estimate(problem, ms)), check_exact=True)
