"""Lipani, Lupu & Hanbury (2015): the tables :mod:`pbtools.papers.lipani2015` derives from an
analysis: Figure 2's generalizability coefficients and SRE* under each significance test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools import stats
from pbtools.papers.common import with_cutoff


def gtheory(truth: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Figure 2: Eρ² and Φ of the true per-topic P@n of all pooled runs, per n, beside the MAE
    change of Lipani's correction against the reduced pool (top 75 %, leave-one-org-out)."""
    rows = []
    t = truth[truth["runs"] == "all"]
    # the balanced design: the topics every run has (a run's average may hold more under
    # ``topics="answered"``, a topic the qrels lack)
    t = t[
        t.groupby(["n", "qid"])["name"].transform("size")
        == t.groupby("n")["name"].transform("nunique")
    ]
    top = table[(table["runs"] == "top75") & (table["by"] == "org")].set_index(["n", "estimator"])
    for n, g in t.groupby("n", sort=True):
        gt = stats.generalizability(g[["name", "qid", "value"]]).iloc[0]
        lip, red = top.loc[(n, "lipani"), "mae"], top.loc[(n, "reduced"), "mae"]
        rows.append(
            {
                "n": int(n),
                "var_system": gt["var_system"],
                "var_topic": gt["var_topic"],
                "var_residual": gt["var_residual"],
                "n_topics": int(gt["n_topics"]),
                "e_rho2": gt["e_rho2"],
                "phi": gt["phi"],
                "mae_change_pct": 100.0 * (lip - red) / red if red > 0 else np.nan,
            }
        )
    return with_cutoff(pd.DataFrame(rows))


def sre_tests(main) -> pd.DataFrame:
    """SRE* of every configuration under each test of :data:`pbtools.stats.SRE_TESTS`, on the
    topics of each run's average (``ranked``, what ``analyze`` does) and, for comparison, with
    the topics a run did not answer filled with 0 (``filled``, pbtools before issue 24)."""
    keys = ["leave_out", "runs", "measure", "estimator"]
    keyed = main.scores[[*keys, "name", "true", "estimate"]]
    parts = []
    for test in stats.SRE_TESTS:
        for topics, truth in (
            ("ranked", main.truth),
            ("filled", main.truth.drop(columns="ranked")),
        ):
            sig = stats.pair_significance(truth, test, by=["runs", "measure"])
            e = stats.error_table(keyed, sig, by=keys)[[*keys, "sre_star"]]
            parts.append(e.assign(test=test, topics=topics))
    return with_cutoff(pd.concat(parts, ignore_index=True))
