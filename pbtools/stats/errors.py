"""Error of estimated scores against a ground truth: MAE, SRE and SRE* (Lipani et al. 2015 §5.1,
PROTOCOL-lipani2015 items 15-17; Webber & Park 2009 §3.1).

Input convention for every function here: a tidy frame with columns ``name`` (run), ``true``,
``estimate``, optionally ``qid`` (then the frame is per topic and scores are first averaged over
topics per run), plus any key columns (``track``, ``n``, ``estimator``, ``top75``, ``runs`` …).
``by`` names the grouping keys; by default every column other than name/true/estimate/qid.
Output: one row per group, the keys followed by the statistic.

Ranks and the SRE* "crossed" set
--------------------------------
For run i with true score t_i and estimate e_i, among the other runs j of its group:
oR_i = 1 + #{j: t_j > t_i}, nR_i = 1 + #{j: t_j > e_i}, SRE = Σ_i |oR_i - nR_i|. The two counts
are nested, so |oR_i - nR_i| = #crossed_i with

    crossed_i = {j ≠ i : min(t_i, e_i) < t_j <= max(t_i, e_i)}

(the runs whose true score the estimate passed over; ties with the lower end are not passed,
ties with the upper end are). SRE*_i = #{j ∈ crossed_i : the pair (i, j) is significantly
different in the truth}; SRE* = Σ_i SRE*_i. Hence SRE* <= SRE, with equality when every pair is
significant.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.engine.dense import expand_ranges
from pbtools.errors import InputError
from pbtools.frames import require_columns
from pbtools.groups import group_frame_rows
from pbtools.stats.pairjoin import crossed_rejects

_VALUE_COLUMNS = ("name", "true", "estimate", "qid")


def _keys(frame: pd.DataFrame, by: Sequence[str] | None) -> list[str]:
    require_columns(frame, ("name", "true", "estimate"), "error frame")
    if by is None:
        return [c for c in frame.columns if c not in _VALUE_COLUMNS]
    by = [by] if isinstance(by, str) else list(by)
    require_columns(frame, by, "error frame (by=)")
    return by


def _run_level(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per (keys, name): run scores, averaged over topics when ``qid`` is present."""
    cols = [*keys, "name", "true", "estimate"]
    df = frame[cols + (["qid"] if "qid" in frame.columns else [])]
    for c in ("true", "estimate"):
        if df[c].isna().any():
            raise ValueError(f"column {c!r} has missing values")
    if "qid" in df.columns:
        df = (
            df.groupby([*keys, "name"], sort=False, observed=True, dropna=False)[
                ["true", "estimate"]
            ]
            .mean()
            .reset_index()
        )
    elif len(group_frame_rows(df, [*keys, "name"], dropna=False)[1]) < len(df):
        dup = df.loc[df.duplicated([*keys, "name"], keep=False), [*keys, "name"]].head(4)
        raise ValueError(
            "several rows per (group, run) and no 'qid' column; add qid for per-topic rows or "
            f"fix the keys (by=). Duplicates such as:\n{dup}"
        )
    return df.reset_index(drop=True)


def _group_codes(df: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Integer group code per row and the frame of distinct keys (in order of first appearance)."""
    if not keys:
        return np.zeros(len(df), dtype=np.int64), pd.DataFrame(index=[0])
    codes, first = group_frame_rows(df, keys, dropna=False)
    return codes, df.iloc[first][keys].reset_index(drop=True)


def _with_keys(groups: pd.DataFrame, **columns) -> pd.DataFrame:
    out = groups.copy() if len(groups.columns) else pd.DataFrame(index=groups.index)
    for name, col in columns.items():
        out[name] = col
    return out.reset_index(drop=True)


def mae(
    frame: pd.DataFrame, by: Sequence[str] | None = None, per_topic: bool = False
) -> pd.DataFrame:
    """Mean absolute error between true and estimated scores (Lipani §5.1, Webber & Park §3.1).

    Run level (default, as PROTOCOL item 15): MAE = (1/|R|) Σ_r |T_r - E_r|, with T_r, E_r the
    run's mean true and estimated scores over topics. ``per_topic=True`` (needs ``qid``):
    MAE = mean over (run, topic) rows of |t - e|.

    Parameters
    ----------
    frame : DataFrame
        ``name``, ``true``, ``estimate`` [, ``qid``] + keys.
    by : sequence of str, optional
        Grouping keys (default: every other column).
    per_topic : bool

    Returns
    -------
    DataFrame
        Keys + ``mae``.

    Examples
    --------
    Per topic a errs by 0.4 twice, b not at all (0.4·2/4 = 0.2); the run means agree (0.4 each
    for a, 0.3 each for b), so the run-level MAE is 0:

    >>> import pandas as pd
    >>> pt = pd.DataFrame({"name": list("aabb"), "qid": list("1212"),
    ...                    "true": [0.2, 0.6, 0.5, 0.1], "estimate": [0.6, 0.2, 0.5, 0.1]})
    >>> mae(pt)["mae"].tolist(), mae(pt, per_topic=True)["mae"].round(4).tolist()
    ([0.0], [0.2])
    """
    keys = _keys(frame, by)
    if per_topic:
        if "qid" not in frame.columns:
            raise ValueError("per_topic=True needs a 'qid' column")
        df = frame[[*keys, "true", "estimate"]]
        g, groups = _group_codes(df, keys)
    else:
        _, df, g, groups = _prepare(frame, keys)
    return _mae(df, g, groups)


def _mae(df, g, groups) -> pd.DataFrame:
    err = np.abs(df["true"].to_numpy(float) - df["estimate"].to_numpy(float))
    n = np.bincount(g, minlength=len(groups))
    return _with_keys(groups, mae=np.bincount(g, err, minlength=len(groups)) / n)


def _prepare(frame: pd.DataFrame, by: Sequence[str] | None):
    """The run-level rows of ``frame``, their group codes and the groups' keys."""
    keys = _keys(frame, by)
    df = _run_level(frame, keys)
    g, groups = _group_codes(df, keys)
    return keys, df, g, groups


def _crossing(prepared):
    """Per run of the prepared rows (:func:`_prepare`) the crossed interval (lo, hi]."""
    _, df, g, groups = prepared
    size = np.bincount(g, minlength=len(groups))
    if (size < 2).any():
        bad = groups.iloc[np.flatnonzero(size < 2)[:3]].to_dict("records")
        raise InputError(f"rank errors need at least 2 runs per group; groups such as {bad}")
    t = df["true"].to_numpy(float)
    e = df["estimate"].to_numpy(float)
    return t, np.minimum(t, e), np.maximum(t, e)


def _sorted_keys(g, t, lo, hi):
    """The rows' (group, rank of t) packed into sortable integers, sorted, with the sort order
    and the queries' packed bounds (group, rank of lo) and (group, rank of hi).

    Values are mapped to dense ranks over all of t, lo, hi so that (group, rank) packs into one
    integer and ``lo < t_r <= hi`` within a group is one ``searchsorted`` range.
    """
    ranks = np.unique(np.concatenate([t, lo, hi]), return_inverse=True)[1]
    m = int(ranks.max()) + 1
    rt, rlo, rhi = np.split(ranks.astype(np.int64).ravel(), [len(t), len(t) + len(lo)])
    g = np.asarray(g, dtype=np.int64)
    keys = g * m + rt
    order = np.argsort(keys, kind="stable")
    return keys[order], order, g * m + rlo, g * m + rhi


def _count_in(g, t, lo, hi) -> np.ndarray:
    """Per row i: #{rows r of i's group: lo_i < t_r <= hi_i}, by one global searchsorted;
    counts include row i itself when its t lies in (lo, hi]."""
    keys, _, qlo, qhi = _sorted_keys(g, t, lo, hi)
    return np.searchsorted(keys, qhi, side="right") - np.searchsorted(keys, qlo, side="right")


def _crossed_pairs(g, t, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Every (i, j), j ≠ i of i's group, with lo_i < t_j <= hi_i: the crossed pairs of SRE.

    Each i's j's are one range of the rows sorted by (group, t), so only the crossed pairs are
    materialised (their number is the SRE, plus the moved runs themselves), never the
    group size² candidate pairs.
    """
    keys, order, qlo, qhi = _sorted_keys(g, t, lo, hi)
    lower = np.searchsorted(keys, qlo, side="right")
    upper = np.searchsorted(keys, qhi, side="right")
    i, pos = expand_ranges(lower, upper - lower)
    j = order[pos]
    keep = i != j
    return i[keep], j[keep]


def sre(frame: pd.DataFrame, by: Sequence[str] | None = None) -> pd.DataFrame:
    """System rank error (Lipani §5.1; PROTOCOL item 16).

    For each run i of a group: oR_i = 1 + #{j ≠ i: true_j > true_i}, nR_i = 1 + #{j ≠ i:
    true_j > est_i} (the estimate placed in the others' true ranking); SRE = Σ_i |oR_i - nR_i|.
    Computed as Σ_i #crossed_i (module docstring), one searchsorted over all groups.

    Parameters
    ----------
    frame : DataFrame
        ``name``, ``true``, ``estimate`` [, ``qid``] + keys (at least 2 runs per group).
    by : sequence of str, optional
        Grouping keys (default: every other column).

    Returns
    -------
    DataFrame
        Keys + ``sre`` (int).

    Examples
    --------
    b's estimate 0.45 passes a (0.40): oR_b = 2, nR_b = 1; d's 0.25 passes c (0.20): oR_d = 4,
    nR_d = 3. SRE = 1 + 1 = 2. Grouped by ``estimator``, the exact estimates of y give 0.

    >>> import pandas as pd
    >>> f = pd.DataFrame({"name": list("abcd"), "true": [0.4, 0.3, 0.2, 0.1],
    ...                   "estimate": [0.4, 0.45, 0.2, 0.25]})
    >>> sre(f)["sre"].tolist()
    [2]
    >>> both = pd.concat([f.assign(estimator="x"), f.assign(estimator="y", estimate=f["true"])])
    >>> sre(both, by=["estimator"])
      estimator  sre
    0         x    2
    1         y    0
    """
    return _sre(_prepare(frame, by))


def _sre(prepared) -> pd.DataFrame:
    _, _, g, groups = prepared
    t, lo, hi = _crossing(prepared)
    # run i itself lies in (lo, hi] iff t_i = hi > lo, i.e. iff it moved down
    crossed = _count_in(g, t, lo, hi) - ((t == hi) & (lo < hi))
    return _with_keys(groups, sre=np.bincount(g, crossed, minlength=len(groups)).astype(np.int64))


def sre_star(
    frame: pd.DataFrame,
    significance: pd.DataFrame,
    by: Sequence[str] | None = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """SRE counting only significant reversals (Lipani §5.1, Table 2; PROTOCOL item 17).

    SRE*_i = #{j ≠ i: min(t_i, e_i) < t_j <= max(t_i, e_i) and (i, j) significant in the truth};
    SRE* = Σ_i SRE*_i (see the module docstring for why this interval gives SRE* = SRE when every
    pair is significant).

    Join: on the unordered pair {name_a, name_b} plus every key of ``by`` that is also a column
    of ``significance`` (e.g. ``track``, ``n``; the truth usually has no ``estimator``). A crossed
    pair that is missing from ``significance`` (or matched twice) raises ValueError.

    Parameters
    ----------
    frame : DataFrame
        ``name``, ``true``, ``estimate`` [, ``qid``] + keys.
    significance : DataFrame
        Pairs ``name_a``, ``name_b`` with ``reject`` (bool) or ``p_value`` (then
        reject = p < alpha), e.g. :func:`tukey_hsd` (with ``by=``) on the per-topic truth.
    by : sequence of str, optional
    alpha : float

    Returns
    -------
    DataFrame
        Keys + ``sre_star`` (int).

    Examples
    --------
    The frame of :func:`sre`: of its two reversals, (a, b) and (c, d), only (c, d) is
    significant (p = 0.01 < 0.05), so SRE* = 1 while SRE = 2.

    >>> import pandas as pd
    >>> f = pd.DataFrame({"name": list("abcd"), "true": [0.4, 0.3, 0.2, 0.1],
    ...                   "estimate": [0.4, 0.45, 0.2, 0.25]})
    >>> sig = pd.DataFrame({"name_a": ["a", "c"], "name_b": ["b", "d"], "p_value": [0.2, 0.01]})
    >>> sre_star(f, sig)["sre_star"].tolist()
    [1]
    """
    return _sre_star(_prepare(frame, by), significance, alpha)


def _sre_star(prepared, significance: pd.DataFrame, alpha: float) -> pd.DataFrame:
    keys, df, g, groups = prepared
    t, lo, hi = _crossing(prepared)
    i, j = _crossed_pairs(g, t, lo, hi)
    # each crossed pair looked up in the table of every pair, a chunk of it at a time
    hits = crossed_rejects(df, i, j, significance, keys, alpha)
    counts = np.bincount(g[i], hits, minlength=len(groups))
    return _with_keys(groups, sre_star=counts.astype(np.int64))


def error_table(
    frame: pd.DataFrame,
    significance: pd.DataFrame | None = None,
    by: Sequence[str] | None = None,
    per_topic: bool = False,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """:func:`mae`, :func:`sre` and :func:`sre_star` in one frame.

    Parameters
    ----------
    frame, significance, by, per_topic, alpha
        As in those functions; ``significance`` may be None.

    Returns
    -------
    DataFrame
        Keys + ``mae``, ``sre``, ``sre_star`` (NA when ``significance`` is None).

    Examples
    --------
    MAE = (0 + 0.15 + 0 + 0.15) / 4 = 0.075 on the frame of :func:`sre`:

    >>> import pandas as pd
    >>> f = pd.DataFrame({"name": list("abcd"), "true": [0.4, 0.3, 0.2, 0.1],
    ...                   "estimate": [0.4, 0.45, 0.2, 0.25]})
    >>> sig = pd.DataFrame({"name_a": ["a", "c"], "name_b": ["b", "d"], "p_value": [0.2, 0.01]})
    >>> error_table(f, sig).round(4)
         mae  sre  sre_star
    0  0.075    2         1
    """
    prepared = _prepare(frame, by)  # the run-level rows and groups, once for all three
    keys = prepared[0]
    out = mae(frame, keys, per_topic=True) if per_topic else _mae(*prepared[1:])
    out["sre"] = _sre(prepared)["sre"].to_numpy()
    if significance is None:
        out["sre_star"] = pd.array([pd.NA] * len(out), dtype="Int64")
    else:
        out["sre_star"] = _sre_star(prepared, significance, alpha)["sre_star"].to_numpy()
    return out
