"""Compare runs in one call: means with confidence intervals, paired tests against a baseline (or
all pairs, with Tukey's HSD), multiple-testing corrections, and tables with significance marks.

:func:`compare` is pbtools' answer to PyTerrier's ``pt.Experiment(baseline=...)`` and ranx's
``compare``; the paired tests are the ones of :mod:`pbtools.stats.power` (t, randomisation),
``scipy.stats.wilcoxon`` and :func:`pbtools.stats.tukey_hsd`, all over the runs × topics matrix
of :func:`pbtools.stats.matrix.score_matrix` (runs aligned on qid; a run lacking a topic is an
error naming both).
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from pbtools.errors import InputError
from pbtools.frames import require_columns
from pbtools.stats.comparison_render import render_details, render_latex, render_markdown
from pbtools.stats.hsd import tukey_hsd
from pbtools.stats.matrix import pair_indices, score_matrix
from pbtools.stats.multitest import correction_name, p_adjust
from pbtools.stats.power import paired_t_test, randomization_test
from pbtools.validation import validates

#: the tests :func:`compare` runs, by name (``"randomization"`` is accepted too)
TESTS = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomisation": "paired randomisation test",
    "tukey": "Tukey's HSD test",
}

SUMMARY_COLUMNS = (
    "measure",
    "name",
    "label",
    "n_topics",
    "mean",
    "ci_low",
    "ci_high",
    "diff",
    "wins",
    "ties",
    "losses",
)
TEST_COLUMNS = (
    "measure",
    "name_a",
    "name_b",
    "test",
    "mean_a",
    "mean_b",
    "diff",
    "statistic",
    "p_value",
    "correction",
    "p_corrected",
    "reject",
)


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`: two tidy frames and the settings that made them.

    Attributes
    ----------
    summary : pandas.DataFrame
        One row per measure and run: ``measure``, ``name``, ``label`` (a, b, c, … as in the
        tables), ``n_topics``, ``mean``, ``ci_low``, ``ci_high`` (t interval at level
        1 - alpha), and against the baseline ``diff`` (mean - baseline mean), ``wins``,
        ``ties``, ``losses`` (topics where the run scores above / equal to / below the
        baseline; NA without a baseline).
    tests : pandas.DataFrame
        One row per measure, pair of runs and test: ``measure``, ``name_a``, ``name_b``
        (with a baseline: the run and the baseline), ``test``, ``mean_a``, ``mean_b``, ``diff``
        (mean_a - mean_b), ``statistic`` (t; Wilcoxon's W; the mean difference for the
        randomisation test; Tukey's q), ``p_value``, ``correction``, ``p_corrected``,
        ``reject`` (p_corrected < alpha).
    baseline : str or None
        The baseline run.
    alpha : float
        The significance level.
    correction : str
        ``"holm"``, ``"bonferroni"``, ``"bh"`` or ``"none"``.
    tests_run : tuple of str
        The tests, in the order given.
    """

    summary: pd.DataFrame
    tests: pd.DataFrame
    baseline: str | None
    alpha: float
    correction: str
    tests_run: tuple[str, ...]

    def marks_test(self, test: str | None = None) -> str:
        """The test whose decisions the tables mark: ``test`` if given, else Tukey's HSD
        without a baseline and the first test with one."""
        if test is None:
            return "tukey" if self.baseline is None else self.tests_run[0]
        test = _test_name(test)
        if test not in self.tests_run:
            raise InputError(f"test {test!r} was not run (ran {list(self.tests_run)})")
        return test

    def to_markdown(self, test: str | None = None, digits: int = 4, ci: bool = False) -> str:
        """A Markdown table of the means, ranx style: each run is lettered (a, b, …) and a
        superscript lists the runs it is significantly better than (``test``, corrected);
        the best mean per measure is bold. ``ci=True`` adds the confidence intervals. A note
        under the table says what the marks mean."""
        return render_markdown(self, self.marks_test(test), digits, ci)

    def to_latex(self, test: str | None = None, digits: int = 4, caption: bool = True) -> str:
        """The table of :meth:`to_markdown` as a LaTeX ``table`` (booktabs), superscripts in
        math mode aligned with ``\\hphantom``; the caption says what the marks mean."""
        return render_latex(self, self.marks_test(test), digits, caption)

    def details_markdown(self, digits: int = 4) -> str:
        """The :attr:`tests` frame as a Markdown table: measure, run, the run it is tested
        against, test, difference of means, p-value, corrected p-value and decision."""
        return render_details(self, digits)

    def __str__(self) -> str:
        return self.to_markdown()

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def _test_name(test: str) -> str:
    key = "randomisation" if test == "randomization" else str(test)
    if key not in TESTS:
        raise InputError(f"unknown test {test!r}; choose from {list(TESTS)}")
    return key


def _measure_rng(seed: int | None, measure: str) -> np.random.Generator:
    """One generator per measure, so that a measure's resamples do not depend on the others."""
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng([int(seed), zlib.crc32(measure.encode())])


def _wilcoxon(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.stats.wilcoxon`` on every row (zero differences dropped, scipy's defaults);
    a row of zeros gives W = 0, p = 1."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        res = stats.wilcoxon(z, axis=1)
    w = np.atleast_1d(np.asarray(res.statistic, dtype=np.float64))
    p = np.atleast_1d(np.asarray(res.pvalue, dtype=np.float64))
    zero = ~(z != 0).any(axis=1)
    return np.where(zero, 0.0, w), np.where(zero, 1.0, p)


def _labels(k: int) -> list[str]:
    """a, b, …, z, aa, ab, … (bijective base 26)."""
    out = []
    for i in range(k):
        s, n = "", i + 1
        while n:
            n, r = divmod(n - 1, 26)
            s = chr(97 + r) + s
        out.append(s)
    return out


def _one_measure(df, measure, baseline, labels, tests, correction, alpha, B, seed):
    try:
        sm = score_matrix(df, None)
    except InputError as err:
        raise InputError(
            f"{measure}: {err}. Paired tests need every run scored on the same topics; "
            "evaluate with topics='all' (trec_eval -c, CLI --all-topics) to score a missing "
            "topic as an empty ranking"
        ) from err
    names, x, t = [str(n) for n in sm.names], sm.values, sm.t
    if t < 2:
        raise InputError(f"{measure}: paired tests need at least 2 topics, got {t}")
    if baseline is not None and baseline not in names:
        raise InputError(f"{measure}: the baseline {baseline!r} has no scores")
    means = x.mean(axis=1)
    half = stats.t.isf(alpha / 2.0, t - 1) * x.std(axis=1, ddof=1) / np.sqrt(t)
    summary = pd.DataFrame(
        {"measure": measure, "name": names, "n_topics": t, "mean": means}
    ).assign(ci_low=means - half, ci_high=means + half)
    if baseline is not None:
        bi = names.index(baseline)
        d = x - x[bi]
        summary["diff"] = means - means[bi]
        for col, hit in (("wins", d > 0), ("ties", d == 0), ("losses", d < 0)):
            summary[col] = pd.array(hit.sum(axis=1), dtype="Int64")
        a = np.array([i for i in range(len(names)) if i != bi], dtype=np.int64)
        b = np.full(len(a), bi)
    else:
        summary["diff"] = np.nan
        for col in ("wins", "ties", "losses"):
            summary[col] = pd.array([pd.NA] * len(names), dtype="Int64")
        a, b = pair_indices(len(names))
    summary["label"] = summary["name"].map(labels)
    rank = np.argsort([list(labels).index(n) for n in names], kind="stable")
    summary = summary.iloc[rank].reset_index(drop=True)
    z = x[a] - x[b]
    parts = []
    for test in tests:
        if test == "t":
            stat, p = paired_t_test(z, alpha)[:2]
        elif test == "wilcoxon":
            stat, p = _wilcoxon(z)
        elif test == "randomisation":
            p = randomization_test(z, B, alpha, _measure_rng(seed, measure))[1]
            stat = z.mean(axis=1)
        else:
            hsd = tukey_hsd(df, None, two_way=True, alpha=alpha)
            k = len(names)
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            pos = lo * k - lo * (lo + 1) // 2 + (hi - lo - 1)  # row of (lo, hi) in pair order
            stat, p = hsd["q"].to_numpy()[pos], hsd["p_value"].to_numpy()[pos]
        p = np.asarray(p, dtype=np.float64)
        # Tukey's p-values are already family-wise (studentized range over all pairs)
        corr = "tukey" if test == "tukey" else correction
        p_corr = p if test == "tukey" else p_adjust(p, correction)
        parts.append(
            pd.DataFrame(
                {
                    "measure": measure,
                    "name_a": [names[i] for i in a],
                    "name_b": [names[i] for i in b],
                    "test": test,
                    "mean_a": means[a],
                    "mean_b": means[b],
                    "diff": z.mean(axis=1),
                    "statistic": np.asarray(stat, dtype=np.float64),
                    "p_value": p,
                    "correction": corr,
                    "p_corrected": p_corr,
                    "reject": p_corr < alpha,
                }
            )
        )
    return summary[list(SUMMARY_COLUMNS)], pd.concat(parts, ignore_index=True)


@validates(per_topic="results")
def compare(
    per_topic: pd.DataFrame,
    baseline: str | None = None,
    tests: Sequence[str] = ("t", "wilcoxon", "randomisation"),
    correction: str | None = "holm",
    alpha: float = 0.05,
    B: int = 10_000,
    seed: int | None = 0,
) -> Comparison:
    """Compare runs on per-topic scores: means with confidence intervals and paired tests.

    For each measure, the runs × topics matrix is built (runs aligned on qid; a run that lacks
    a topic another run has is an error naming both). Each run gets its mean and a t confidence
    interval at level 1 - alpha. With a ``baseline``, every other run is tested against it;
    without one, every pair of runs is, and Tukey's HSD (two-way, topics as blocks; Carterette
    2012) is added. The p-values of each (measure, test) family are corrected with
    ``correction`` (Tukey's are family-wise already and are left as they are).

    Parameters
    ----------
    per_topic : pandas.DataFrame
        ``name``, ``qid``, ``measure``, ``value``, as
        ``pbtools.measures.evaluate(..., per_topic=True)`` returns (rows with qid ``all``, the
        averages that ``pbtools evaluate --per-topic`` adds, are left out). A frame without
        ``measure`` is one measure.
    baseline : str, optional
        The run to test the others against; default: all pairs.
    tests : sequence of str
        ``"t"`` (paired t-test, as ``scipy.stats.ttest_rel``), ``"wilcoxon"``
        (``scipy.stats.wilcoxon``: signed ranks, zero differences dropped), ``"randomisation"``
        (paired sign-flip test with ``B`` random sign vectors; ``"randomization"`` is accepted)
        and ``"tukey"`` (:func:`pbtools.stats.tukey_hsd`).
    correction : {"holm", "bonferroni", "bh", "none"} or None
        Multiple-testing correction within each (measure, test) family (:func:`p_adjust`).
    alpha : float
        Significance level and 1 - confidence of the intervals.
    B : int
        Number of sign vectors of the randomisation test.
    seed : int or None
        Seed of the randomisation test (one generator per measure, derived from the seed and
        the measure's name): equal seeds give equal p-values.

    Returns
    -------
    Comparison
        ``.summary`` and ``.tests`` frames (columns documented in :class:`Comparison`),
        ``.to_markdown()`` and ``.to_latex()``.

    References
    ----------
    Carterette, B. (2012). Multiple testing in statistical analysis of systems-based
    information retrieval experiments. ACM TOIS 30(1).
    Smucker, M. D., Allan, J., Carterette, B. (2007). A comparison of statistical significance
    tests for information retrieval evaluation. CIKM 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> per_topic = pd.DataFrame({
    ...     "name": ["bm25"] * 6 + ["dense"] * 6,
    ...     "qid": [str(q) for q in range(1, 7)] * 2,
    ...     "measure": "P@10",
    ...     "value": [0.2, 0.4, 0.1, 0.5, 0.3, 0.2, 0.4, 0.5, 0.3, 0.7, 0.4, 0.4]})
    >>> cmp = compare(per_topic, baseline="bm25", tests=("t", "wilcoxon"))
    >>> cmp.summary[["name", "label", "mean", "diff", "wins", "losses"]].round(4)
        name label    mean    diff  wins  losses
    0   bm25     a  0.2833  0.0000     0       0
    1  dense     b  0.4500  0.1667     6       0
    >>> cmp.tests[["name_a", "name_b", "test", "p_value", "reject"]].round(4)
      name_a name_b      test  p_value  reject
    0  dense   bm25         t   0.0005    True
    1  dense   bm25  wilcoxon   0.0312    True
    >>> print(cmp.to_markdown(), end="")
    | # | run | P@10 |
    | --- | --- | ---: |
    | a | bm25 (baseline) | 0.2833 |
    | b | dense | **0.4500**ᵃ |
    <BLANKLINE>
    Superscripts: significantly better than the lettered run (paired t-test,
    Holm-corrected p < 0.05, 6 topics). Each run was tested against the baseline
    only. Bold: the best mean of each measure.
    """
    require_columns(per_topic, ("name", "qid", "value"), "per-topic results")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    tests = [tests] if isinstance(tests, str) else list(tests)
    tests = tuple(dict.fromkeys(_test_name(t) for t in tests))
    if baseline is None and "tukey" not in tests:
        tests = (*tests, "tukey")
    if not tests:
        raise InputError("no test given")
    if "randomisation" in tests and B * alpha < 1:
        raise InputError(f"B·alpha must be >= 1 for the randomisation test (B={B}, alpha={alpha})")
    correction = correction_name(correction)
    df = per_topic[per_topic["qid"].astype("str") != "all"]
    if "measure" not in df.columns:
        df = df.assign(measure="value")
    baseline = None if baseline is None else str(baseline)
    measures = pd.unique(df["measure"].astype("str"))
    if len(measures) == 0:
        raise InputError("no per-topic rows to compare")
    names = sorted(pd.unique(df["name"].astype("str")))
    if baseline is not None and baseline not in names:
        raise InputError(f"the baseline {baseline!r} is not among the runs {names}")
    order = names if baseline is None else [baseline, *(n for n in names if n != baseline)]
    labels = dict(zip(order, _labels(len(order)), strict=True))
    summaries, results = [], []
    for measure in measures:
        one = df[df["measure"].astype("str") == measure]
        s, r = _one_measure(one, measure, baseline, labels, tests, correction, alpha, B, seed)
        summaries.append(s)
        results.append(r)
    summary = pd.concat(summaries, ignore_index=True)
    return Comparison(
        summary=summary,
        tests=pd.concat(results, ignore_index=True),
        baseline=baseline,
        alpha=alpha,
        correction=correction,
        tests_run=tests,
    )
