"""Rank correlation between two system rankings: Kendall's τ-b and Yilmaz et al.'s τ_AP."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from pbtools.errors import InputError
from pbtools.frames import require_columns
from pbtools.groups import group_frame_rows

#: up to this many runs τ-b counts concordant − discordant pairs directly (O(n²) memory)
_DIRECT_MAX = 1000


def _aligned(x, y) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(x, pd.Series) and isinstance(y, pd.Series):
        for s, label in ((x, "x"), (y, "y")):
            if s.index.has_duplicates:
                dup = s.index[s.index.duplicated()].unique().tolist()[:5]
                raise ValueError(f"{label} has duplicate run names {dup}")
        only_x = x.index.difference(y.index).tolist()
        only_y = y.index.difference(x.index).tolist()
        if only_x or only_y:
            raise ValueError(
                "rankings must cover the same runs: "
                f"only in x {only_x[:10]}, only in y {only_y[:10]}"
            )
        y = y.reindex(x.index)
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"x and y must be 1-d and of equal length, got {a.shape} and {b.shape}")
    if len(a) < 2:
        raise InputError(f"need at least 2 runs to correlate rankings, got {len(a)}")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("rankings contain missing values")
    return a, b


def _tied_pairs(v: np.ndarray) -> int:
    """Number of pairs with equal values: Σ t(t-1)/2 over the groups of ties."""
    counts = np.unique(v, return_counts=True)[1].astype(np.int64)
    return int(np.sum(counts * (counts - 1) // 2))


def kendall_tau(
    x,
    y=None,
    variant: str = "b",
    *,
    by: Sequence[str] | None = None,
    columns: tuple[str, str] = ("true", "estimate"),
):
    """Rank correlation of two system rankings (scores: higher is better).

    Parameters
    ----------
    x, y : pandas.Series or array-like
        Scores of the same runs: ``pd.Series`` indexed by run name (aligned on the index;
        differing run sets raise ``ValueError``) or equal-length array-likes. For ``"ap"``, ``x``
        is the truth.
    variant : {"b", "ap"}
        ``"b"``: Kendall's τ-b = (C - D) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1/n2 the
        pairs tied in x/y, computed by ``scipy.stats.kendalltau`` (O(n log n)); NaN when a
        ranking is all ties.
        ``"ap"``: τ_AP (Yilmaz, Aslam & Robertson 2008), top-weighted and asymmetric. Sort runs
        by x descending (ties: stable, input order);
        τ_AP = 2/(N-1) Σ_{i=2..N} C(i)/(i-1) - 1, C(i) = #{runs above i in x's ranking that y
        also scores above i}, a tie in y counting ½.
    by, columns
        With a frame as ``x`` (and no ``y``): one τ per group of the key columns ``by`` (default
        every column but ``name``, ``qid`` and ``columns``) between the two ``columns`` (the
        truth first); a per-topic frame (with ``qid``) is averaged per run first. Returns a
        frame of the keys and ``tau``.

    Returns
    -------
    float
        The correlation, in [-1, 1].

    References
    ----------
    Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika 33(3).
    Yilmaz, E., Aslam, J. A., Robertson, S. (2008). A new rank correlation coefficient for
    information retrieval. SIGIR 2008.

    Examples
    --------
    >>> import pandas as pd
    >>> truth = pd.Series([0.4, 0.3, 0.2, 0.1], index=["a", "b", "c", "d"])
    >>> estimate = pd.Series([0.2, 0.1, 0.4, 0.3], index=["d", "c", "a", "b"])
    >>> round(kendall_tau(truth, estimate), 4)  # c and d swapped: 5 of 6 pairs agree
    0.6667
    >>> round(kendall_tau(truth, estimate, variant="ap"), 4)
    0.7778
    """
    if y is None and isinstance(x, pd.DataFrame):  # a frame: one τ per group of ``by``
        return _tau_frame(x, columns[0], columns[1], by, variant)
    a, b = _aligned(x, y)
    if variant == "b":
        # scipy counts concordant - discordant pairs in O(n log n); the integer C - D is
        # recovered from its τ and divided once, so the value is the formula's to the last bit
        n0 = len(a) * (len(a) - 1) // 2
        denom = np.sqrt(float(n0 - _tied_pairs(a)) * float(n0 - _tied_pairs(b)))
        if len(a) <= _DIRECT_MAX:  # C - D over the pairs directly: no per-call scipy overhead
            if denom == 0:  # a ranking that is all ties
                return float("nan")
            upper = np.triu_indices(len(a), 1)
            sa = np.sign(np.subtract.outer(a, a)[upper])
            sb = np.sign(np.subtract.outer(b, b)[upper])
            return float(float(np.dot(sa, sb)) / denom)
        tau = float(stats.kendalltau(a, b, variant="b").statistic)
        if np.isnan(tau):
            return tau
        return float(np.round(tau * denom) / denom)
    if variant == "ap":
        order = np.argsort(-a, kind="stable")
        yb = b[order]
        n = len(yb)
        # above[i, j]: j precedes i in the truth ranking (j < i); credit y_j > y_i, ½ for ties
        above = np.tri(n, n, -1, dtype=bool)
        credit = (yb[None, :] > yb[:, None]) + 0.5 * (yb[None, :] == yb[:, None])
        c = np.sum(credit * above, axis=1)[1:]
        return float(2.0 / (n - 1) * np.sum(c / np.arange(1, n)) - 1.0)
    raise InputError(f"variant must be 'b' or 'ap', got {variant!r}")


def _tau_frame(
    frame: pd.DataFrame,
    x: str = "true",
    y: str = "estimate",
    by: Sequence[str] | None = None,
    variant: str = "b",
) -> pd.DataFrame:
    """:func:`kendall_tau` between columns ``x`` and ``y`` within each group of ``by`` (what
    ``kendall_tau(frame, by=...)`` returns).

    Parameters
    ----------
    frame : pandas.DataFrame
        ``name``, ``x``, ``y`` and key columns; a per-topic frame (with ``qid``) is first
        averaged per run.
    x, y : str
        The columns to correlate (``x`` is the truth for τ_AP).
    by : list of str, optional
        Group keys; default every other column except ``qid``.
    variant : {"b", "ap"}
        As in :func:`kendall_tau`.

    Returns
    -------
    pandas.DataFrame
        The keys and ``tau``, one row per group.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"name": list("abcabc"), "true": [3, 2, 1, 3, 2, 1],
    ...                   "estimate": [3, 2, 1, 1, 2, 3], "n": [5, 5, 5, 10, 10, 10]})
    >>> kendall_tau(f)
        n  tau
    0   5  1.0
    1  10 -1.0
    """
    require_columns(frame, ("name", x, y), "rank-correlation frame")
    if by is None:
        by = [c for c in frame.columns if c not in ("name", x, y, "qid")]
    by = [by] if isinstance(by, str) else list(by)
    df = frame
    if "qid" in df.columns:
        df = df.groupby([*by, "name"], sort=False, observed=True)[[x, y]].mean().reset_index()
    if not by:
        s = df.set_index("name")
        return pd.DataFrame({"tau": [kendall_tau(s[x], s[y], variant)]})
    codes, first = group_frame_rows(df, by)
    order = np.argsort(codes, kind="stable")  # rows by group, in order within each
    bounds = np.searchsorted(codes[order], np.arange(len(first) + 1))
    name = pd.factorize(df["name"])[0]
    xs, ys = df[x].to_numpy(np.float64), df[y].to_numpy(np.float64)
    taus = []
    for gi in range(len(first)):  # a handful of groups
        rows = order[bounds[gi] : bounds[gi + 1]]
        if len(np.unique(name[rows])) < len(rows):  # refused by the aligned form, naming them
            s = df.iloc[rows].set_index("name")
            taus.append(kendall_tau(s[x], s[y], variant))
        else:  # x and y of the same rows: already aligned
            taus.append(kendall_tau(xs[rows], ys[rows], variant))
    keys = df[by].iloc[first]
    out = {c: keys[c].tolist() for c in by}  # Python values, as the rows of a groupby loop
    return pd.DataFrame({**out, "tau": np.asarray(taus, dtype=np.float64)})
