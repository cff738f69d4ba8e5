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

from pbtools.frames import require_columns

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
    elif df.duplicated([*keys, "name"]).any():
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
    codes = df.groupby(keys, sort=False, observed=True, dropna=False).ngroup().to_numpy()
    first = np.unique(codes, return_index=True)[1]
    return codes.astype(np.int64), df.iloc[first][keys].reset_index(drop=True)


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
    else:
        df = _run_level(frame, keys)
    g, groups = _group_codes(df, keys)
    err = np.abs(df["true"].to_numpy(float) - df["estimate"].to_numpy(float))
    n = np.bincount(g, minlength=len(groups))
    return _with_keys(groups, mae=np.bincount(g, err, minlength=len(groups)) / n)


def _crossing(frame: pd.DataFrame, by: Sequence[str] | None):
    """Run-level rows, group codes, groups, and per run the crossed interval (lo, hi]."""
    keys = _keys(frame, by)
    df = _run_level(frame, keys)
    g, groups = _group_codes(df, keys)
    size = np.bincount(g, minlength=len(groups))
    if (size < 2).any():
        bad = groups.iloc[np.flatnonzero(size < 2)[:3]].to_dict("records")
        raise ValueError(f"rank errors need at least 2 runs per group; groups such as {bad}")
    t = df["true"].to_numpy(float)
    e = df["estimate"].to_numpy(float)
    return keys, df, g, groups, t, np.minimum(t, e), np.maximum(t, e)


def _count_in(g, t, qg, lo, hi) -> np.ndarray:
    """Per query: #{rows r of group qg: lo < t_r <= hi}, by one global searchsorted.

    Values are mapped to dense ranks over all of t, lo, hi so that (group, rank) packs into one
    sortable integer; counts include the query's own row when its t lies in (lo, hi].
    """
    ranks = np.unique(np.concatenate([t, lo, hi]), return_inverse=True)[1]
    m = int(ranks.max()) + 1
    rt, rlo, rhi = np.split(ranks.astype(np.int64), [len(t), len(t) + len(lo)])
    keys = np.sort(g * m + rt)
    upper = np.searchsorted(keys, qg * m + rhi, side="right")
    lower = np.searchsorted(keys, qg * m + rlo, side="right")
    return upper - lower


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
    _, _, g, groups, t, lo, hi = _crossing(frame, by)
    # run i itself lies in (lo, hi] iff t_i = hi > lo, i.e. iff it moved down
    crossed = _count_in(g, t, g, lo, hi) - ((t == hi) & (lo < hi))
    return _with_keys(groups, sre=np.bincount(g, crossed, minlength=len(groups)).astype(np.int64))


def _reject_table(significance: pd.DataFrame, alpha: float) -> pd.DataFrame:
    require_columns(significance, ("name_a", "name_b"), "significance")
    sig = significance.copy()
    if "reject" not in sig.columns:
        if "p_value" not in sig.columns:
            raise ValueError("significance needs a 'reject' or a 'p_value' column")
        sig["reject"] = sig["p_value"].to_numpy(float) < alpha
    a = sig["name_a"].astype(str).to_numpy(dtype=object)
    b = sig["name_b"].astype(str).to_numpy(dtype=object)
    sig["_lo"], sig["_hi"] = _ordered(a, b)
    return sig


def _ordered(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Element-wise (min, max) of two object arrays of strings: the unordered pair's key."""
    first = a <= b
    return np.where(first, a, b), np.where(first, b, a)


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
    keys, df, g, groups, t, lo, hi = _crossing(frame, by)
    sig = _reject_table(significance, alpha)
    join_keys = [k for k in keys if k in sig.columns]
    # all ordered pairs (i, j) within a group whose j falls in i's crossed interval
    order = np.argsort(g, kind="stable")
    size = np.bincount(g, minlength=len(groups))
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    rep = size[g[order]]
    i = np.repeat(order, rep)
    offs = np.arange(len(i)) - np.repeat(np.cumsum(rep) - rep, rep)
    j = order[start[g[i]] + offs]
    hit = (i != j) & (lo[i] < t[j]) & (t[j] <= hi[i])
    i, j = i[hit], j[hit]
    names = df["name"].astype(str).to_numpy(dtype=object)
    p_lo, p_hi = _ordered(names[i], names[j])
    pairs = pd.DataFrame({"_g": g[i], "_lo": p_lo, "_hi": p_hi})
    for k in join_keys:
        pairs[k] = df[k].to_numpy()[i]
    on = [*join_keys, "_lo", "_hi"]
    sig = sig[[*on, "reject"]]
    if sig.duplicated(on).any():
        raise ValueError(f"significance has duplicate pairs for keys {on[:-2]}")
    merged = pairs.merge(sig, on=on, how="left", validate="many_to_one")
    if merged["reject"].isna().any():
        miss = merged.loc[merged["reject"].isna(), on].drop_duplicates().head(5)
        raise ValueError(f"significance lacks crossed pairs (joined on {on[:-2]} + pair):\n{miss}")
    counts = np.bincount(
        merged["_g"].to_numpy(), merged["reject"].to_numpy(bool), minlength=len(groups)
    )
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
    keys = _keys(frame, by)
    out = mae(frame, keys, per_topic=per_topic)
    out["sre"] = sre(frame, keys)["sre"].to_numpy()
    if significance is None:
        out["sre_star"] = pd.array([pd.NA] * len(out), dtype="Int64")
    else:
        out["sre_star"] = sre_star(frame, significance, keys, alpha)["sre_star"].to_numpy()
    return out
