"""Tukey's HSD for IR experiments (Carterette 2012), with a fast studentized-range tail.

``scipy.stats.studentized_range.sf`` integrates numerically point by point (~10 ms per value, 7 s
for the 703 pairs of 38 runs). :func:`studentized_range_sf` evaluates the same double integral for
all q at once: the range tail on a fine grid, interpolated, then integrated over the distribution
of the standard-error scale. It agrees with scipy to ~1e-9 absolute for df >= 2 (tested).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import optimize, sparse, special, stats
from scipy.interpolate import CubicSpline
from scipy.sparse import csgraph

from pbtools.errors import InputError
from pbtools.stats.matrix import PAIR_BLOCK, by_groups, pair_table, score_matrix

_W_MAX = 40.0  # P(range of k normals > 40) < 1e-300 for any k we meet

#: (q × scale node) cells :func:`studentized_range_sf` evaluates at once: its temporaries (the
#: spline's among them) stay a few MiB whatever the number of q, and the values do not depend on
#: the threads of the BLAS (280,875 q of 750 runs: the same to the bit on 1 and 2 OpenBLAS
#: threads, and as 2^22 cells on one thread; 2^22 cells on 2 threads moved 4 in the last bit)
SF_CELLS = 1 << 18


def _range_sf(w: np.ndarray, k: int, n_z: int = 401) -> np.ndarray:
    """P(range of ``k`` iid N(0,1) > w) = k ∫ φ(z) [Φ(z)^(k-1) - (Φ(z) - Φ(z-w))^(k-1)] dz.

    Trapezoid rule on z ∈ [-10, 12] (spectrally accurate for this smooth, decaying integrand);
    the difference of powers is formed as ``-a^m expm1(m log1p(-b/a))`` to keep tail precision.
    """
    z = np.linspace(-10.0, 12.0, n_z)
    h = z[1] - z[0]
    a = special.ndtr(z)
    b = special.ndtr(z[None, :] - w[:, None])
    m = k - 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.minimum(np.where(a > 0, b / a, 1.0), 1.0)
        diff = -np.exp(m * np.log(a))[None, :] * np.expm1(m * np.log1p(-ratio))
    diff = np.nan_to_num(diff, nan=0.0, posinf=0.0, neginf=0.0)
    phi = np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    return np.clip(k * h * (diff @ phi), 0.0, 1.0)


@lru_cache(maxsize=64)
def _log_range_sf_spline(k: int) -> CubicSpline:
    """log P(R_k > w) on w ∈ [0, 40] (step 0.02), as a cubic spline; built once per k."""
    grid = np.arange(0.0, _W_MAX + 0.02, 0.02)
    return CubicSpline(grid, np.log(np.maximum(_range_sf(grid, k), 1e-300)))


@lru_cache(maxsize=64)
def _scale_nodes(df: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes t = log s and normalised weights for S, df·S² ~ χ²_df (trapezoid over log s)."""
    if not np.isfinite(df):
        return np.zeros(1), np.ones(1)
    lo = 0.5 * np.log(2.0 * special.gammaincinv(df / 2.0, 1e-16) / df)
    hi = 0.5 * np.log(2.0 * special.gammainccinv(df / 2.0, 1e-16) / df)
    n_s = int(np.clip(np.ceil((hi - lo) / 0.01), 81, 4001))
    t = np.linspace(lo, hi, n_s)
    s2 = np.exp(2.0 * t)
    wt = np.exp(stats.chi2.logpdf(df * s2, df) + np.log(2.0 * df * s2))
    return t, wt / wt.sum()


def sf_rows(nodes: int) -> int:
    """How many q :func:`studentized_range_sf` takes at once with ``nodes`` scale nodes
    (:data:`SF_CELLS`): a multiple of 256, so that the matrix-vector product's kernel takes
    every row in the same block as in one product. A caller that splits q in pieces of a
    multiple of it, from q's first row, gets every value to the bit of one call.

    Examples
    --------
    >>> sf_rows(81), sf_rows(4001)
    (3072, 256)
    """
    return max(256, SF_CELLS // nodes // 256 * 256)


def scale_nodes(df: float) -> int:
    """The number of scale nodes :func:`studentized_range_sf` integrates over at ``df``."""
    return len(_scale_nodes(float(df))[0])


def studentized_range_sf(q, k: int, df: float) -> np.ndarray:
    """Survival function of the studentized range Q(k, df), vectorised over ``q``.

    sf(q) = ∫ f_S(s) P(R_k > q s) ds with df·S² ~ χ²_df; integrated over log s on a trapezoid
    grid spanning the 1e-16 quantiles. Same quantity as
    ``scipy.stats.studentized_range.sf(q, k, df)``.

    Parameters
    ----------
    q : float or array_like
    k : int
        Number of groups (≥ 2).
    df : float
        Degrees of freedom of the variance estimate.

    Returns
    -------
    numpy.ndarray
        P(Q > q), one per ``q`` (NaN where ``q`` is NaN).

    Examples
    --------
    >>> studentized_range_sf([3.0, 4.0], 3, 10).round(6)  # scipy: 0.134983, 0.043349
    array([0.134983, 0.043349])
    """
    q = np.atleast_1d(np.asarray(q, dtype=np.float64))
    if k < 2:
        raise InputError(f"studentized range needs k >= 2 groups, got {k}")
    t, wt = _scale_nodes(float(df))
    spline = _log_range_sf_spline(int(k))
    out = np.full_like(q, np.nan)
    ok = np.flatnonzero(~np.isnan(q))
    scale = np.exp(t)[None, :]
    # q × nodes temporaries, a chunk of q at a time: a runs² vector of q (Tukey HSD's pairs)
    # costs its own size, not nodes × that (each q's value is computed alone either way)
    step = sf_rows(len(t))
    for lo in range(0, len(ok), step):
        rows = slice(lo, lo + step)
        w = np.minimum(np.abs(q[ok[rows]])[:, None] * scale, _W_MAX)
        vals = np.exp(spline(w))
        vals[w >= _W_MAX] = 0.0
        out[ok[rows]] = np.clip(vals @ wt, 0.0, 1.0)
    return out


@lru_cache(maxsize=256)
def studentized_range_isf(alpha: float, k: int, df: float) -> float:
    """The upper-``alpha`` critical value of Q(k, df), by root-finding on
    :func:`studentized_range_sf` (``scipy.stats.studentized_range.isf``, but fast).

    Parameters
    ----------
    alpha : float
        In (0, 1).
    k : int
    df : float

    Returns
    -------
    float

    Examples
    --------
    >>> round(studentized_range_isf(0.05, 3, 10), 4)  # tables of Q: q_0.05(3, 10) = 3.877
    3.8768
    """
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    return float(
        optimize.brentq(
            lambda x: studentized_range_sf(x, k, df)[0] - alpha, 0.0, _W_MAX, xtol=1e-12
        )
    )


def tukey_hsd(
    results: pd.DataFrame,
    measure: str | None = None,
    two_way: bool = True,
    alpha: float = 0.05,
    by: list[str] | None = None,
    unbalanced: bool = False,
    categorical: bool = False,
) -> pd.DataFrame:
    """Tukey's honestly significant difference test over all pairs of runs (Carterette 2012).

    Two-way (default; topic as a blocking factor), as R's ``TukeyHSD(aov(score ~ run + topic))``:
    with k runs, t topics, run means m_r, topic means m_q, grand mean m,
    residuals e = x - m_r - m_q + m, MSE = Σe² / df, df = (k-1)(t-1).
    One-way (``two_way=False``): MSE = Σ(x - m_r)² / df, df = N - k (N = k·t), as
    ``statsmodels.stats.multicomp.pairwise_tukeyhsd``.
    For each pair: diff = m_a - m_b, q = |diff| / sqrt(MSE / t),
    p = P(Q(k, df) > q) (studentized range), reject = p < alpha,
    lower/upper = diff ∓ q_crit·sqrt(MSE / t) with q_crit the 1-alpha quantile.

    ``unbalanced=True`` accepts runs averaged over different topics (a run that lacks topics):
    each run's mean is over its own n_r topics, the two-way model is fitted by least squares on
    the cells present (df = N - k - t + 1, N the cells), and each pair's standard error is
    Tukey-Kramer's sqrt(MSE/2 · (1/n_a + 1/n_b)). On a balanced design it is the test above.

    Parameters
    ----------
    results : DataFrame
        Per-topic results with columns ``name``, ``qid``, ``value`` (and ``measure``). Runs must
        share their topics (ValueError naming the gaps otherwise).
    measure : str, optional
        Filter ``results`` on this measure.
    two_way : bool
    alpha : float
    by : list of str, optional
        Key columns (e.g. ``["runs", "measure"]``): one test within each group, the keys
        leading the output — ready to pass as ``significance`` to
        :func:`pbtools.stats.sre_star`.
    unbalanced : bool
        Accept runs scored on different topics (Tukey-Kramer, above).
    categorical : bool
        ``name_a``, ``name_b`` (and the keys of ``by``) as categoricals: codes into the run
        names, a few bytes a pair (:func:`~pbtools.stats.matrix.pair_names`).

    Returns
    -------
    DataFrame
        One row per pair, ``name_a < name_b`` (string order): ``name_a``, ``name_b``, ``diff``,
        ``p_value``, ``reject``, ``q``, ``lower``, ``upper``; ``df.attrs`` holds ``mse``,
        ``df_resid``, ``k``, ``n_topics``, ``alpha``, ``two_way``.

    Examples
    --------
    >>> import pandas as pd
    >>> per_topic = pd.DataFrame({"name": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
    ...                           "qid": list("123") * 3,
    ...                           "value": [.9, .8, .7, .5, .45, .4, .1, .2, .15]})
    >>> res = tukey_hsd(per_topic)
    >>> res[["name_a", "name_b", "reject"]].to_numpy().tolist()
    [['a', 'b', True], ['a', 'c', True], ['b', 'c', True]]
    >>> tukey_hsd(per_topic.assign(measure="P@10"), by=["measure"]).columns[:3].tolist()
    ['measure', 'name_a', 'name_b']

    Run c without topic 3: its mean is over topics 1 and 2 (0.15), the pairs with it get a wider
    interval:

    >>> res = tukey_hsd(per_topic.iloc[:-1], unbalanced=True)
    >>> res["diff"].round(4).tolist(), res.attrs["df_resid"]
    ([0.35, 0.65, 0.3], 3)
    """
    if by:
        return _grouped(results, list(by), measure, two_way, alpha, unbalanced, categorical)
    fit = hsd_fit(results, measure, two_way, alpha, unbalanced)
    out = pair_table(results, [], lambda _: fit, categorical)
    out.attrs.update(
        mse=fit.mse, df_resid=fit.df_resid, k=fit.k, n_topics=fit.t, alpha=alpha, two_way=two_way
    )
    return out


#: the columns of :func:`tukey_hsd`'s table besides the names, in order
HSD_COLUMNS = ("diff", "p_value", "reject", "q", "lower", "upper")


@dataclass(frozen=True)
class HsdFit:
    """The fitted model of one Tukey HSD (:func:`hsd_fit`), from which the table of every pair
    is computed a block of pairs at a time (:meth:`pairs`; :func:`pbtools.stats.matrix.pair_table`).

    ``sizes`` is each run's number of topics (None for a balanced design: every run on the
    ``t`` topics). ``columns`` are the table's columns (:data:`HSD_COLUMNS`, or a leading part of
    them); ``block`` the pairs computed at once: a multiple of :func:`sf_rows`, so that every
    p-value is the one a single call over all pairs gives, to the bit.
    """

    names: np.ndarray
    means: np.ndarray
    sizes: np.ndarray | None
    mse: float
    df_resid: int
    t: int
    alpha: float
    columns: tuple[str, ...] = HSD_COLUMNS

    @property
    def k(self) -> int:
        return len(self.names)

    @property
    def block(self) -> int:
        rows = sf_rows(scale_nodes(self.df_resid))
        return rows * max(1, PAIR_BLOCK // rows)

    def pairs(self, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
        """The table's columns for the pairs ``(a, b)`` (indices into ``names``)."""
        if self.sizes is None:
            se = np.sqrt(self.mse / self.t)
        else:
            se = np.sqrt(self.mse / 2.0 * (1 / self.sizes[a] + 1 / self.sizes[b]))
        diff = self.means[a] - self.means[b]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.abs(diff) / se
        q = np.where(diff == 0, 0.0, q)
        p = studentized_range_sf(q, self.k, self.df_resid)
        out = {"diff": diff, "p_value": p, "reject": p < self.alpha, "q": q}
        if "lower" in self.columns:
            crit = studentized_range_isf(self.alpha, self.k, self.df_resid) * se
            out["lower"], out["upper"] = diff - crit, diff + crit
        return {c: out[c] for c in self.columns}


def hsd_fit(
    results: pd.DataFrame,
    measure: str | None = None,
    two_way: bool = True,
    alpha: float = 0.05,
    unbalanced: bool = False,
    columns: tuple[str, ...] = HSD_COLUMNS,
) -> HsdFit:
    """The model behind :func:`tukey_hsd` (same parameters): run means, topics per run, MSE
    and its degrees of freedom; memory linear in the cells, whatever the number of pairs.

    Examples
    --------
    >>> import pandas as pd
    >>> per_topic = pd.DataFrame({"name": list("aabbcc"), "qid": list("121212"),
    ...                           "value": [.9, .7, .5, .4, .1, .2]})
    >>> fit = hsd_fit(per_topic)
    >>> fit.k, fit.df_resid, round(fit.mse, 4)
    (3, 2, 0.0117)
    >>> fit.pairs(np.array([0]), np.array([2]))["diff"].round(2).tolist()
    [0.65]
    """
    sm = score_matrix(results, measure, missing=unbalanced)
    x, k, t = sm.values, sm.k, sm.t
    if two_way and t < 2:
        raise InputError("two-way Tukey HSD needs at least 2 topics")
    present = ~np.isnan(x)
    sizes = None
    if present.all():
        run_means = x.mean(axis=1)
        if two_way:
            resid = x - run_means[:, None] - x.mean(axis=0)[None, :] + x.mean()
            df_resid = (k - 1) * (t - 1)
        else:
            resid = x - run_means[:, None]
            df_resid = k * t - k
    else:
        sizes = present.sum(axis=1)
        run_means = np.nansum(x, axis=1) / sizes
        resid, df_resid = _residuals(x, present, run_means, two_way)
    if df_resid < 1:
        raise InputError(f"no residual degrees of freedom (k={k} runs, t={t} topics)")
    mse = float(np.square(resid).sum() / df_resid)
    return HsdFit(sm.names, run_means, sizes, mse, int(df_resid), t, alpha, tuple(columns))


def _residuals(x, present, run_means, two_way) -> tuple[np.ndarray, int]:
    """Residuals of the cells present and their degrees of freedom: the one-way model, or the
    two-way additive model (run + topic) fitted by least squares (an unbalanced design).

    The two-way fit absorbs the run effects (runs as blocks): with N the runs × topics
    incidence of the cells present, the topic effects b solve the topics × topics normal
    equations C b = Q, C = diag(n_q) − Nᵀ diag(1/n_r) N, Q = y_·q − Nᵀ ȳ_r, one topic of each
    connected component of runs and topics held at 0; each run's effect is ȳ_r − (N b)_r / n_r.
    No cells × runs design matrix: memory linear in the cells (issue 25 item 4).
    """
    r, q = np.nonzero(present)
    y = x[r, q]
    if not two_way:
        return y - run_means[r], len(y) - x.shape[0]
    k, t = x.shape
    cells = present.astype(np.float64)
    sizes = cells.sum(axis=1)
    graph = sparse.coo_matrix((np.ones(len(r)), (r, k + q)), shape=(k + t, k + t))
    n_parts, part = csgraph.connected_components(graph, directed=False)
    first = np.zeros(t, dtype=bool)
    first[np.unique(part[k:], return_index=True)[1]] = True  # each component's first topic
    free = np.flatnonzero(~first)
    c = np.diag(cells.sum(axis=0)) - cells.T @ (cells / sizes[:, None])
    rhs = np.where(present, x, 0.0).sum(axis=0) - cells.T @ run_means
    topic = np.zeros(t)
    if len(free):
        topic[free] = np.linalg.solve(c[np.ix_(free, free)], rhs[free])
    run = run_means - (cells @ topic) / sizes
    return y - run[r] - topic[q], len(y) - (k + t - n_parts)


def _grouped(results, by, measure, two_way, alpha, unbalanced, categorical) -> pd.DataFrame:
    if categorical:  # each group's table written straight into the stacked table's columns
        return pair_table(
            results,
            by,
            lambda g: hsd_fit(g, measure, two_way, alpha, unbalanced),
            categorical=True,
        )
    return by_groups(
        results,
        by,
        lambda g: tukey_hsd(g, measure, two_way, alpha, unbalanced=unbalanced),
    )
