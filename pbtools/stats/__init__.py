"""Statistics for pool-bias experiments: the public API of pbtools' statistics.

Each statistic is one function over tidy frames that returns a tidy frame (pingouin style). The
implementations live in one private module per idea; import them from here.

Error of estimated scores against a ground truth (Lipani et al. 2015 §5.1, PROTOCOL items 15-17)
    :func:`mae`, :func:`sre`, :func:`sre_star`, :func:`error_table` — input ``name``, ``true``,
    ``estimate`` [, ``qid``] + key columns; output keys + ``mae`` / ``sre`` / ``sre_star``.
    :func:`error_intervals` — the run-to-run noise: paired bootstrap intervals over the
    evaluated runs of each estimator's MAE and SRE and of every two estimators' difference.
    SRE* counts, for each run i, the runs j with min(t_i, e_i) < t_j <= max(t_i, e_i) whose pair
    with i is significant in the truth (so SRE* = SRE when all pairs are significant).
Significance of run pairs (per-topic input ``name``, ``qid``, ``measure``, ``value``)
    :func:`tukey_hsd` (two-way run + topic, Carterette 2012; or one-way; ``by=`` for groups;
    Tukey-Kramer for runs scored on different topics); the tests behind SRE*
    (:func:`sre_significance`: :func:`pair_significance` with :data:`SRE_TESTS`, or the
    reference tool's ``pValues.<metric>.csv`` files, :func:`pvalue_significance`);
    :func:`discriminative_power` (Sakai 2006/2008 §6: paired bootstrap, t or randomisation
    test), :func:`discriminative_power_summary`, :func:`misses_false_alarms`.
Comparing runs (per-topic input ``name``, ``qid``, ``measure``, ``value``)
    :func:`compare` — means with confidence intervals, paired t / Wilcoxon / randomisation tests
    against a baseline or all pairs (+ Tukey HSD), corrected p-values, reject flags; a
    :class:`Comparison` with ``.summary``, ``.tests``, ``.to_markdown()``, ``.to_latex()``.
    :func:`p_adjust` — Holm, Bonferroni, Benjamini–Hochberg.
Rank correlation
    :func:`kendall_tau` (τ-b, or τ_AP of Yilmaz et al. 2008; on a frame, ``by=`` groups).
Reliability (Lipani §5.2; Urbano et al. 2013)
    :func:`generalizability` — variance components, Eρ², Φ.
Tables
    :func:`table2` (Lipani Table 2 layout), :func:`to_markdown`, :func:`to_latex`.
"""

from __future__ import annotations

from pbtools.stats.comparison import Comparison, compare
from pbtools.stats.errors import error_table, mae, sre, sre_star
from pbtools.stats.estimator_table import table2, to_latex, to_markdown
from pbtools.stats.gtheory import generalizability
from pbtools.stats.hsd import studentized_range_isf, studentized_range_sf, tukey_hsd
from pbtools.stats.multitest import p_adjust
from pbtools.stats.power import (
    discriminative_power,
    discriminative_power_summary,
    misses_false_alarms,
)
from pbtools.stats.runboot import error_intervals
from pbtools.stats.significance import (
    SRE_TESTS,
    pair_significance,
    pvalue_significance,
    read_pvalues,
    sre_significance,
)
from pbtools.stats.tau import kendall_tau

__all__ = [
    "Comparison",
    "compare",
    "discriminative_power",
    "discriminative_power_summary",
    "error_intervals",
    "error_table",
    "generalizability",
    "kendall_tau",
    "mae",
    "misses_false_alarms",
    "p_adjust",
    "pair_significance",
    "pvalue_significance",
    "read_pvalues",
    "sre_significance",
    "SRE_TESTS",
    "sre",
    "sre_star",
    "studentized_range_isf",
    "studentized_range_sf",
    "table2",
    "to_latex",
    "to_markdown",
    "tukey_hsd",
]
