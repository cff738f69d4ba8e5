"""Which pairs of runs differ significantly in the truth: the tests behind SRE* (Lipani et al.
2015 §5.1; PROTOCOL-lipani2015 item 17).

SRE* counts a reversal only when the pair is significantly different in the true ranking, so
the test must compare what that ranking compares: each run's mean over *the topics of its
average* (:func:`pbtools.measures.topics.topic_mask`, the ``ranked`` column of an analysis'
truth) — never a topic a run did not answer filled in with 0. Three sources of p-values:

==========  ==================================================================================
``"hsd"``   two-way Tukey HSD, run + topic (Carterette 2012; the default): one test over all
            pairs with the family-wise error controlled; a run that lacks topics is compared
            on its own topics (Tukey-Kramer, :func:`pbtools.stats.tukey_hsd` with
            ``unbalanced=True``)
``"t"``     the paired t-test of every pair on the topics both runs are averaged over, with no
            multiplicity correction (the unadjusted all-pairs comparison)
a path      the reference tool's p-values (:func:`read_pvalues`): ``pValues.<metric>.csv``
            with lines ``runA,runB,p``; a pair the file lacks is not significant
==========  ==================================================================================

On TREC-2 (``analyze --protocol lipani2015``, top 75 %, leave-one-organization-out, P@5 / 10 /
20 / 30 / 100, the paper's SRE* 0 0 0 0 2 for Lipani and Webber & Park, 0 0 0 0 4 for the reduced
pool): ``"hsd"`` gives 0 0 0 0 0, 0 0 0 0 0 and 0 0 0 0 1 (12 of the 15 cells equal the
paper's); ``"t"`` gives 0 0 0 0 4, 0 0 0 0 4 and 0 0 0 1 10 (11 of 15). With ``rutcomb1``'s 25
unanswered topics filled with 0, as pbtools did before, every P@5-P@30 count was a pair with
``rutcomb1`` (HSD: 2 1 3 4 0, 3 1 3 4 0, 2 1 3 4 1; t: 2 1 3 4 4, 3 1 3 4 4, 2 1 3 5 10; 0 of
15). ``benchmarks/lipani2015.py`` regenerates these numbers.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.frames import require_columns
from pbtools.stats.hsd import hsd_fit, tukey_hsd
from pbtools.stats.matrix import (
    PAIR_BLOCK,
    TableBlocks,
    by_groups,
    pair_blocks,
    pair_indices,
    pair_table,
    score_matrix,
)
from pbtools.stats.power import paired_t_test

#: the named tests behind SRE* (a path to p-values files is the third source)
SRE_TESTS = {
    "hsd": "two-way Tukey HSD (run + topic), each run on the topics of its average",
    "t": "paired t-test of every pair on the topics both runs are averaged over, unadjusted",
}


class PValuesWarning(UserWarning):
    """Pairs of runs that a p-values file lacks (counted as not significant)."""


def _ranked(truth: pd.DataFrame) -> pd.DataFrame:
    """The rows of the topics each run's average is over (all rows without ``ranked``)."""
    if "ranked" not in truth.columns:
        return truth
    return truth[truth["ranked"].to_numpy(dtype=bool)]


def pair_significance(
    truth: pd.DataFrame,
    test: str = "hsd",
    by: Sequence[str] | None = None,
    alpha: float = 0.05,
    compact: bool = False,
    blocks: bool = False,
) -> pd.DataFrame | TableBlocks:
    """p-values of every pair of runs in the per-topic truth, on the topics of each run's average.

    Parameters
    ----------
    truth : DataFrame
        ``name``, ``qid``, ``value`` [, ``measure``, ``ranked``, keys]: per-topic true scores.
        With a boolean ``ranked`` column only its True rows are used (an analysis' truth flags
        the topics each run is averaged over); without it, every row.
    test : {"hsd", "t"}
        :data:`SRE_TESTS` (module docstring).
    by : sequence of str, optional
        Key columns (e.g. ``["runs", "measure"]``): one test per group, the keys leading.
    alpha : float
    compact : bool
        The table as :func:`pbtools.stats.sre_star` and an analysis need it, for runs² pairs:
        keys, ``name_a`` and ``name_b`` categorical (codes into the names), and of the test's
        own columns only ``diff`` (:data:`COMPACT_COLUMNS`): about 23 bytes a pair and key
        (1 + 1 + 2 + 2 + 8 + 8 + 1 below 32,768 runs), each group's table trimmed as soon as
        it is computed.
    blocks : bool
        The compact table as :class:`~pbtools.stats.matrix.TableBlocks` (needs ``compact``):
        computed a block of pairs at a time as it is read, never whole
        (:func:`pbtools.stats.matrix.pair_blocks`; issue 30 item 4) — what ``pbtools analyze``
        looks SRE*'s pairs up in and writes, block by block.

    Returns
    -------
    DataFrame or TableBlocks
        Keys + ``name_a``, ``name_b``, ``p_value``, ``reject`` (+ the test's own columns), ready
        for :func:`pbtools.stats.sre_star`.

    Examples
    --------
    Run c answered topics 1 and 2 only: it is compared on them, not with a 0 on topic 3.

    >>> import pandas as pd
    >>> truth = pd.DataFrame({"name": list("aaabbbccc"), "qid": list("123") * 3,
    ...                       "value": [.9, .8, .7, .5, .45, .4, .1, .2, 0.0],
    ...                       "ranked": [True] * 8 + [False]})
    >>> pair_significance(truth, "t")[["name_a", "name_b", "reject"]].values.tolist()
    [['a', 'b', True], ['a', 'c', False], ['b', 'c', False]]
    """
    require_columns(truth, ("name", "qid", "value"), "truth")
    if test not in SRE_TESTS:
        raise InputError(f"unknown SRE* test {test!r}; known: {sorted(SRE_TESTS)} or a path")
    if blocks and not compact:
        raise ValueError("pair_significance: blocks=True gives the compact table (compact=True)")
    rows = _ranked(truth)
    by = list(by or ())
    if test == "hsd" and not compact:
        return tukey_hsd(rows, by=by or None, alpha=alpha, unbalanced=True)
    columns = COMPACT_COLUMNS[2:] if compact else ("diff", "statistic", "p_value", "reject")
    if test == "hsd":

        def fit(g):
            return hsd_fit(g, alpha=alpha, unbalanced=True, columns=columns)

    else:

        def fit(g):
            return _PairedT(score_matrix(g, None, missing=True), alpha, columns)

    if by and not compact:
        return by_groups(rows, by, lambda g: pair_table(g, [], fit))
    if blocks:
        return pair_blocks(rows, by, fit)
    # a compact table is written a block of pairs at a time, straight into its columns
    return pair_table(rows, by, fit, categorical=compact)


#: the columns of a compact significance table besides its keys (:func:`pair_significance`)
COMPACT_COLUMNS = ("name_a", "name_b", "diff", "p_value", "reject")


class _PairedT:
    """The paired t-test of every pair of runs of a score matrix (NaN: a topic the run is not
    averaged over), a block of pairs at a time (:func:`pbtools.stats.matrix.pair_table`)."""

    def __init__(self, sm, alpha: float, columns=("diff", "statistic", "p_value", "reject")):
        self.names, self.values, self.alpha, self.columns = sm.names, sm.values, alpha, columns
        self.block = max(1, PAIR_BLOCK // max(sm.t, 1))  # pairs × topics differences at once

    def pairs(self, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
        z = self.values[a] - self.values[b]  # NaN where one run of the pair lacks the topic
        t, p, _ = paired_t_test(z, self.alpha)
        out = {"diff": np.nanmean(z, axis=1), "statistic": t, "p_value": p}
        out["reject"] = p < self.alpha
        return {c: out[c] for c in self.columns}


def _run_id(name: str) -> str:
    return name.strip().replace("input.", "")


def pvalues_file(path: str | Path, measure) -> Path:
    """The p-values file of ``measure`` under ``path``: the file itself (a file, or a name
    ending in ``.csv``), or in a directory
    ``pValues.<trec_eval name>.csv`` (``pValues.P_10.csv``; the reference tool's name), else
    ``pValues.<pbtools name>.csv``.

    Examples
    --------
    >>> from pbtools.measures import parse
    >>> pvalues_file("pv", parse("P@10")).as_posix()
    'pv/pValues.P_10.csv'
    """
    path = Path(path)
    if path.is_file() or path.suffix.lower() == ".csv":
        return path
    first = path / f"pValues.{measure.trec_name}.csv"
    other = path / f"pValues.{measure}.csv"
    return other if not first.is_file() and other.is_file() else first


def read_pvalues(path: str | Path) -> pd.DataFrame:
    """A p-values file of the reference tool (aldolipani/PoolBiasEstimators).

    One pair a line, ``runA,runB,p`` (a leading ``input.`` of the run names is dropped, as the
    reference does); a first line whose p is not a number is a header. Any other line is refused
    (ValueError naming the file and line).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    DataFrame
        ``name_a``, ``name_b``, ``p_value``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "pValues.P_10.csv"
    >>> _ = f.write_text("input.a,input.b,0.01\\nb,c,0.5\\n")
    >>> read_pvalues(f).values.tolist()
    [['a', 'b', 0.01], ['b', 'c', 0.5]]
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such p-values file (pValues.<metric>.csv)")
    rows = []
    for no, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split(",")
        try:
            if len(parts) != 3:
                raise ValueError
            p = float(parts[2])
        except ValueError:
            if no == 1 and len(parts) == 3:
                continue  # a header
            raise InputError(
                f"{path}, line {no}: expected 'runA,runB,p' (3 comma-separated fields, p a "
                f"number), got {line[:80]!r}"
            ) from None
        if not 0.0 <= p <= 1.0:
            raise InputError(f"{path}, line {no}: p-value {p} is not in [0, 1]")
        rows.append((_run_id(parts[0]), _run_id(parts[1]), p))
    return pd.DataFrame(rows, columns=["name_a", "name_b", "p_value"])


def pvalue_significance(
    truth: pd.DataFrame,
    path: str | Path,
    by: Sequence[str] = ("measure",),
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Every pair of the truth's runs per group, with its p-value from the reference tool's files.

    ``by`` must hold ``measure``: its file is :func:`pvalues_file` (``path``, measure). A pair
    the file lacks in either order (or in lower case, as the reference looks it up) has p = 1:
    not significant; how many are lacking is reported once per file
    (:class:`PValuesWarning`).

    Parameters
    ----------
    truth : DataFrame
        ``name``, ``measure`` + the other keys of ``by``.
    path : str or Path
        A directory of ``pValues.<metric>.csv`` files, or the file of the one measure.
    by : sequence of str
    alpha : float

    Returns
    -------
    DataFrame
        Keys + ``name_a``, ``name_b``, ``p_value``, ``reject``.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "pValues.P_10.csv").write_text("a,b,0.01\\na,c,0.2\\nB,C,0.5\\n")
    >>> truth = pd.DataFrame({"name": list("abc"), "qid": "1", "value": 0.0, "measure": "P@10"})
    >>> pvalue_significance(truth, d)[["name_a", "name_b", "reject"]].values.tolist()
    [['a', 'b', True], ['a', 'c', False], ['b', 'c', False]]
    """
    from pbtools.measures import parse

    by = list(by)
    require_columns(truth, ("name", *by), "truth")
    if "measure" not in by:
        raise InputError("p-values files are per measure: by= must include 'measure'")
    measures = pd.unique(truth["measure"].astype(str))
    if Path(path).is_file() and len(measures) > 1:
        raise InputError(
            f"{path} holds the p-values of one measure; for {len(measures)} measures give the "
            "directory of pValues.<metric>.csv files"
        )
    tables: dict[str, dict[tuple[str, str], float]] = {}
    for m in measures:
        file = pvalues_file(path, parse(m))
        pv = read_pvalues(file)
        table: dict[tuple[str, str], float] = {}
        for a, b, p in pv.itertuples(index=False):  # the file's pairs, once per measure
            for key in ((a, b), (b, a), (a.lower(), b.lower()), (b.lower(), a.lower())):
                table.setdefault(key, p)
        tables[m] = table
    lacking: dict[str, list[int]] = {}

    def one(group: pd.DataFrame) -> pd.DataFrame:
        m = str(group["measure"].iloc[0])
        names = np.sort(pd.unique(group["name"].astype(str)))
        a, b = pair_indices(len(names))
        table = tables[m]
        p = np.array(
            [
                table.get((x, y), table.get((x.lower(), y.lower()), np.nan))
                for x, y in zip(names[a], names[b], strict=True)
            ],
            dtype=np.float64,
        )
        missing = np.isnan(p)
        count = lacking.setdefault(m, [0, 0])
        count[0] += int(missing.sum())
        count[1] += len(p)
        p = np.where(missing, 1.0, p)
        return pd.DataFrame(
            {
                "name_a": pd.array(names[a], dtype="str"),
                "name_b": pd.array(names[b], dtype="str"),
                "p_value": p,
                "reject": p < alpha,
            }
        )

    out = by_groups(truth, by, one)
    for m, (miss, total) in lacking.items():
        if miss:
            warnings.warn(
                f"{pvalues_file(path, parse(m))}: {miss} of {total} pairs of runs absent, "
                "counted as not significant (as the reference tool does)",
                PValuesWarning,
                stacklevel=2,
            )
    return out


def sre_significance(
    truth: pd.DataFrame,
    test: str | Path = "hsd",
    by: Sequence[str] = ("measure",),
    alpha: float = 0.05,
    compact: bool = False,
    blocks: bool = False,
) -> pd.DataFrame | TableBlocks:
    """The pairs behind SRE*: :func:`pair_significance` for a test of :data:`SRE_TESTS` (with
    ``compact`` and ``blocks``), else ``test`` is a path of p-values files
    (:func:`pvalue_significance`; with ``blocks`` its table — read whole from the files —
    given as blocks of :data:`~pbtools.stats.pairjoin.SIG_ROWS` rows).

    Examples
    --------
    >>> import pandas as pd
    >>> truth = pd.DataFrame({"name": list("aabb"), "qid": list("1212"), "measure": "P@5",
    ...                       "value": [.8, .6, .2, .4]})
    >>> sre_significance(truth, "t")[["measure", "name_a", "name_b"]].values.tolist()
    [['P@5', 'a', 'b']]
    """
    if isinstance(test, str) and test in SRE_TESTS:
        return pair_significance(truth, test, by, alpha, compact, blocks)
    if not Path(test).exists():
        raise InputError(
            f"SRE* test {str(test)!r} is neither a test ({', '.join(SRE_TESTS)}) nor an "
            "existing p-values file or directory"
        )
    table = pvalue_significance(truth, test, by, alpha)
    if not blocks:
        return table
    from pbtools.stats.pairjoin import SIG_ROWS

    return TableBlocks.of_frame(table, SIG_ROWS)


__all__ = [
    "COMPACT_COLUMNS",
    "SRE_TESTS",
    "PValuesWarning",
    "pair_significance",
    "pvalue_significance",
    "pvalues_file",
    "read_pvalues",
    "sre_significance",
]
