"""Discriminative power (Sakai 2006; Sakai 2008 §6): a paired test for every pair of runs, the
share of significant pairs, the difference required for significance, misses and false alarms.

All pairs are tested at once: the per-topic differences form a (pairs × topics) matrix Z, and the
resamples are one (B × topics) matrix shared by all pairs, so each test is a matrix product.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from pbtools.errors import InputError
from pbtools.stats.matrix import pair_indices, score_matrix

METHODS = ("bootstrap", "t", "randomization")


def _t_stat(mean: np.ndarray, sd: np.ndarray, n: int) -> np.ndarray:
    """mean / (sd / sqrt(n)), with 0/0 := 0 and c/0 := ±inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    return np.where(mean == 0, 0.0, t)


def _kth_largest(x: np.ndarray, k: int) -> np.ndarray:
    """The k-th largest value (1-based) of each row."""
    return -np.partition(-x, k - 1, axis=1)[:, k - 1]


def _bootstrap(z: np.ndarray, B: int, alpha: float, rng: np.random.Generator):
    """Sakai's paired bootstrap test on each row of z (pairs × n topics).

    t(z) = mean(z) / (sd(z)/sqrt(n)); w = z - mean(z); for b = 1..B draw n topics with replacement
    (one index matrix for all pairs), ASL = #{b: |t(w*_b)| >= |t(z)|} / B. Critical t per pair:
    the (B·alpha)-th largest |t(w*_b)|.
    """
    p, n = z.shape
    zbar = z.mean(axis=1)
    sd = z.std(axis=1, ddof=1)
    t_obs = _t_stat(zbar, sd, n)
    idx = rng.integers(0, n, size=(B, n))
    counts = np.bincount((np.arange(B)[:, None] * n + idx).ravel(), minlength=B * n)
    counts = counts.reshape(B, n).astype(np.float64).T  # n × B: draws of each topic
    w = z - zbar[:, None]
    s1 = w @ counts
    s2 = (w * w) @ counts
    mean = s1 / n
    var = np.maximum(s2 - n * mean * mean, 0.0) / (n - 1)
    t_star = np.abs(_t_stat(mean, np.sqrt(var), n))
    tol = 1e-9 * np.maximum(np.abs(t_obs), 1.0)
    asl = np.mean(t_star >= (np.abs(t_obs) - tol)[:, None], axis=1)
    crit_t = _kth_largest(t_star, max(int(B * alpha), 1))
    return t_obs, asl, crit_t * sd / np.sqrt(n)


def randomization_test(z: np.ndarray, B: int, alpha: float, rng: np.random.Generator):
    """Paired randomisation (sign-flip) test of every row of ``z`` at once.

    Under H0 each topic's difference is as likely negated; p = #{b: |mean(z·s_b)| >= |mean(z)|}
    / B with s_b ∈ {±1}^n, one sign matrix for all rows (so a row's p does not depend on the
    other rows).

    Parameters
    ----------
    z : numpy.ndarray
        Per-topic differences, pairs × topics.
    B : int
        Number of sign vectors.
    alpha : float
        Level for the critical difference.
    rng : numpy.random.Generator
        The source of the signs (``numpy.random.default_rng(seed)``).

    Returns
    -------
    t, p, crit : numpy.ndarray
        Per row: the paired t statistic, the p-value, and the critical difference (the
        (B·alpha)-th largest |mean(z·s_b)|).

    Examples
    --------
    >>> z = np.array([[0.1, 0.2, 0.3, 0.1, 0.2, 0.2], [0.1, -0.1, 0.2, -0.2, 0.0, 0.05]])
    >>> t, p, crit = randomization_test(z, 2000, 0.05, np.random.default_rng(0))
    >>> bool(p[0] < 0.05), bool(p[1] > 0.5)
    (True, True)
    """
    n = z.shape[1]
    zbar = z.mean(axis=1)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n, B))
    m_star = np.abs(z @ signs) / n
    tol = 1e-12 * np.maximum(np.abs(zbar), 1.0)
    p = np.mean(m_star >= (np.abs(zbar) - tol)[:, None], axis=1)
    t_obs = _t_stat(zbar, z.std(axis=1, ddof=1), n)
    return t_obs, p, _kth_largest(m_star, max(int(B * alpha), 1))


def paired_t_test(z: np.ndarray, alpha: float):
    """Two-sided paired t-test of every row of ``z`` (``scipy.stats.ttest_rel``), df = n - 1.

    Parameters
    ----------
    z : numpy.ndarray
        Per-topic differences, pairs × topics. NaN cells (a topic one run of the pair was not
        averaged over) are left out: each row is tested on its own n topics.
    alpha : float
        Level for the critical difference.

    Returns
    -------
    t, p, crit : numpy.ndarray
        Per row: t = mean / (sd / sqrt(n)) (0/0 := 0, c/0 := ±inf with p = 0), the two-sided
        p-value, and the critical difference t_{1-alpha/2, n-1} · sd / sqrt(n).

    Examples
    --------
    >>> t, p, crit = paired_t_test(np.array([[0.1, 0.2, 0.3, 0.2]]), 0.05)
    >>> round(float(t[0]), 4), round(float(p[0]), 4)
    (4.899, 0.0163)
    >>> t, p, crit = paired_t_test(np.array([[0.1, 0.2, 0.3, 0.2, np.nan]]), 0.05)
    >>> round(float(t[0]), 4)
    4.899
    """
    if np.isnan(z).any():
        n = (~np.isnan(z)).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean, sd = np.nanmean(z, axis=1), np.nanstd(z, axis=1, ddof=1)
    else:
        n, mean, sd = z.shape[1], z.mean(axis=1), z.std(axis=1, ddof=1)
    t_obs = _t_stat(mean, sd, n)
    p = np.where(np.isfinite(t_obs), 2.0 * stats.t.sf(np.abs(t_obs), n - 1), 0.0)
    return t_obs, p, stats.t.isf(alpha / 2.0, n - 1) * sd / np.sqrt(n)


def discriminative_power(
    results: pd.DataFrame,
    measure: str | None = None,
    B: int = 1000,
    alpha: float = 0.05,
    seed: int | None = 0,
    method: str = "bootstrap",
) -> pd.DataFrame:
    """Two-sided paired test for every pair of runs and Sakai's discriminative power.

    ``method``: ``"bootstrap"`` (Sakai 2006: shifted paired bootstrap of the t statistic, ASL as
    in :func:`_bootstrap`), ``"t"`` (paired t-test) or ``"randomization"`` (sign-flip, B
    samples). Random methods use ``numpy.random.default_rng(seed)``: one resample matrix shared
    by all pairs, so the result is deterministic given the seed.

    Required difference (Sakai 2006, "estimated difference required"): for each pair, the
    smallest |mean difference| that would be significant given its spread — bootstrap:
    crit_t · sd(z)/sqrt(n), crit_t the (B·alpha)-th largest |t(w*_b)|; t-test: t_{1-alpha/2, n-1}
    · sd(z)/sqrt(n); randomisation: the (B·alpha)-th largest |mean(z·s_b)|. The summary value is
    the maximum over all pairs (Sakai's conservative choice).

    Parameters
    ----------
    results : DataFrame
        Per-topic results ``name``, ``qid``, ``value`` [, ``measure``], runs aligned on qid.
    measure : str, optional
        The measure to test when ``results`` holds several.
    B : int
        Resamples (bootstrap, randomisation).
    alpha : float
        Significance level.
    seed : int or None
    method : {"bootstrap", "t", "randomization"}

    Returns
    -------
    DataFrame
        One row per pair (``name_a < name_b``): ``name_a``, ``name_b``, ``diff`` (mean_a -
        mean_b), ``t``, ``asl``, ``p_value`` (= asl), ``significant`` (asl < alpha),
        ``required_diff``. ``df.attrs``: ``share_significant`` (|C*|/|C|),
        ``required_difference``, ``n_pairs``, ``n_significant``, ``n_topics``, ``method``,
        ``B``, ``alpha``, ``seed``.

    Examples
    --------
    Three runs on six topics. The paired t-test agrees with ``scipy.stats.ttest_rel`` (a vs b:
    differences 0.4, 0.1, 0.4, 0.3, 0.1, 0.4, mean 0.2833, sd 0.1472, t = 0.2833/(0.1472/√6) =
    4.715, p = 0.0053):

    >>> import pandas as pd
    >>> scores = {"a": [0.9, 0.7, 0.6, 0.8, 0.5, 0.7], "b": [0.5, 0.6, 0.2, 0.5, 0.4, 0.3],
    ...           "c": [0.6, 0.4, 0.3, 0.4, 0.5, 0.2]}
    >>> res = pd.DataFrame([{"name": n, "qid": str(q), "value": x}
    ...                     for n, xs in scores.items() for q, x in enumerate(xs)])
    >>> dp = discriminative_power(res, method="t")
    >>> dp[["name_a", "name_b", "diff", "t", "p_value", "significant"]].round(4)
      name_a name_b    diff       t  p_value  significant
    0      a      b  0.2833  4.7150   0.0053         True
    1      a      c  0.3000  4.3916   0.0071         True
    2      b      c  0.0167  0.3071   0.7711        False
    >>> dp.attrs["share_significant"]  # |C*| / |C| = 2 / 3
    0.6666666666666666

    Sakai's bootstrap (seeded) is more conservative on so few topics:

    >>> discriminative_power(res, B=1000, seed=0)["significant"].tolist()
    [False, True, False]
    """
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, got {method!r}")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    if method != "t" and B * alpha < 1:
        raise InputError(f"B·alpha must be >= 1 to find a critical value (B={B}, alpha={alpha})")
    sm = score_matrix(results, measure)
    if sm.t < 2:
        raise InputError("paired tests need at least 2 topics")
    a, b = pair_indices(sm.k)
    z = sm.values[a] - sm.values[b]
    rng = np.random.default_rng(seed)
    if method == "bootstrap":
        t_obs, p, req = _bootstrap(z, B, alpha, rng)
    elif method == "randomization":
        t_obs, p, req = randomization_test(z, B, alpha, rng)
    else:
        t_obs, p, req = paired_t_test(z, alpha)
    sig = p < alpha
    out = pd.DataFrame(
        {
            "name_a": pd.array(sm.names[a], dtype="str"),
            "name_b": pd.array(sm.names[b], dtype="str"),
            "diff": z.mean(axis=1),
            "t": t_obs,
            "asl": p,
            "p_value": p,
            "significant": sig,
            "required_diff": req,
        }
    )
    out.attrs.update(
        share_significant=float(sig.mean()),
        required_difference=float(req.max()),
        n_pairs=int(len(sig)),
        n_significant=int(sig.sum()),
        n_topics=sm.t,
        method=method,
        B=B if method != "t" else None,
        alpha=alpha,
        seed=seed,
    )
    return out


def discriminative_power_summary(
    results: pd.DataFrame,
    measure: str | None = None,
    B: int = 1000,
    alpha: float = 0.05,
    seed: int | None = 0,
    method: str = "bootstrap",
) -> pd.DataFrame:
    """:func:`discriminative_power` reduced to one row.

    Parameters
    ----------
    results : DataFrame
        As in :func:`discriminative_power`, or a frame from :func:`discriminative_power`
        (its ``attrs`` are used; the other arguments are then ignored).
    measure, B, alpha, seed, method
        As in :func:`discriminative_power`.

    Returns
    -------
    DataFrame
        One row: ``n_pairs``, ``n_significant``, ``share_significant``,
        ``required_difference``, ``n_topics``, ``method``, ``B``, ``alpha``, ``seed``.

    Examples
    --------
    >>> import pandas as pd
    >>> scores = {"a": [0.9, 0.7, 0.6, 0.8, 0.5, 0.7], "b": [0.5, 0.6, 0.2, 0.5, 0.4, 0.3],
    ...           "c": [0.6, 0.4, 0.3, 0.4, 0.5, 0.2]}
    >>> res = pd.DataFrame([{"name": n, "qid": str(q), "value": x}
    ...                     for n, xs in scores.items() for q, x in enumerate(xs)])
    >>> s = discriminative_power_summary(res, method="t")
    >>> s[["n_pairs", "n_significant", "share_significant", "required_difference"]].round(4)
       n_pairs  n_significant  share_significant  required_difference
    0        3              2             0.6667               0.1756
    """
    if {"name_a", "name_b", "significant"} <= set(results.columns) and results.attrs:
        attrs = results.attrs
    else:
        attrs = discriminative_power(results, measure, B, alpha, seed, method).attrs
    cols = (
        "n_pairs",
        "n_significant",
        "share_significant",
        "required_difference",
        "n_topics",
        "method",
        "B",
        "alpha",
        "seed",
    )
    return pd.DataFrame({c: [attrs[c]] for c in cols})


def _pair_key(df: pd.DataFrame, what: str) -> pd.DataFrame:
    need = {"name_a", "name_b", "diff"}
    flag = "significant" if "significant" in df.columns else "reject"
    if not need | {flag} <= set(df.columns):
        raise ValueError(f"{what} needs columns name_a, name_b, diff and significant (or reject)")
    a = df["name_a"].astype(str).to_numpy(dtype=object)
    b = df["name_b"].astype(str).to_numpy(dtype=object)
    swap = a > b
    out = pd.DataFrame(
        {
            "lo": np.where(swap, b, a),
            "hi": np.where(swap, a, b),
            "diff": np.where(swap, -1.0, 1.0) * df["diff"].to_numpy(float),
            "sig": df[flag].to_numpy(bool),
        }
    )
    if out.duplicated(["lo", "hi"]).any():
        raise ValueError(f"{what} has duplicate pairs")
    return out


def misses_false_alarms(full: pd.DataFrame, reduced: pd.DataFrame) -> pd.DataFrame:
    """Compare significance under the full relevance data with a reduced condition (Sakai 2008 §6).

    With C* / C'* the significant pairs under the full / reduced data (the full data is the
    ground truth): ``misses`` = |C* - C'*| (significant under full, not under reduced);
    ``false_alarms`` = |C'* - C*| (not significant under full, significant under reduced: the
    paper's definition, "not sig → sig"); ``sign_reversals`` = pairs significant under both but
    with opposite signs of diff (neither a miss nor a false alarm in Sakai's set terms, so counted
    separately).

    Parameters
    ----------
    full, reduced : DataFrame
        Per-pair frames (``name_a``, ``name_b``, ``diff``, ``significant`` or ``reject``), e.g.
        from :func:`discriminative_power` or :func:`tukey_hsd`, over the same pairs (either
        orientation).

    Returns
    -------
    DataFrame
        One row: ``n_pairs``, ``sig_full``, ``sig_reduced``, ``misses``, ``false_alarms``,
        ``sign_reversals``, ``share_full``, ``share_reduced``.

    Examples
    --------
    Pair (a, b) is significant under the full data only (a miss); (b, c) under the reduced data
    only (a false alarm), given here with the names swapped and the sign of diff flipped:

    >>> import pandas as pd
    >>> full = pd.DataFrame({"name_a": ["a", "a", "b"], "name_b": ["b", "c", "c"],
    ...                      "diff": [0.3, 0.3, 0.1], "significant": [True, True, False]})
    >>> reduced = pd.DataFrame({"name_a": ["a", "a", "c"], "name_b": ["b", "c", "b"],
    ...                         "diff": [0.2, 0.3, -0.1], "significant": [False, True, True]})
    >>> misses_false_alarms(full, reduced)[["sig_full", "misses", "false_alarms", "sign_reversals"]]
       sig_full  misses  false_alarms  sign_reversals
    0         2       1             1               0
    """
    f, r = _pair_key(full, "full"), _pair_key(reduced, "reduced")
    m = f.merge(r, on=["lo", "hi"], how="outer", suffixes=("_f", "_r"), indicator=True)
    if (m["_merge"] != "both").any():
        bad = m.loc[m["_merge"] != "both", ["lo", "hi", "_merge"]].head(5)
        raise ValueError(f"full and reduced must cover the same pairs; differences:\n{bad}")
    sf, sr = m["sig_f"].to_numpy(bool), m["sig_r"].to_numpy(bool)
    rev = sf & sr & (np.sign(m["diff_f"].to_numpy()) != np.sign(m["diff_r"].to_numpy()))
    n = len(m)
    return pd.DataFrame(
        {
            "n_pairs": [n],
            "sig_full": [int(sf.sum())],
            "sig_reduced": [int(sr.sum())],
            "misses": [int((sf & ~sr).sum())],
            "false_alarms": [int((~sf & sr).sum())],
            "sign_reversals": [int(rev.sum())],
            "share_full": [sf.mean()],
            "share_reduced": [sr.mean()],
        }
    )
