"""Multiple-testing corrections of p-values: Holm, Bonferroni, Benjamini–Hochberg (vectorised)."""

from __future__ import annotations

import numpy as np

from pbtools.errors import InputError

#: accepted names of :func:`p_adjust`'s methods → the canonical name
CORRECTIONS = {
    "holm": "holm",
    "bonferroni": "bonferroni",
    "bh": "bh",
    "fdr_bh": "bh",
    "benjamini-hochberg": "bh",
    "none": "none",
}


def correction_name(method: str | None) -> str:
    """The canonical name of a correction (``None`` → ``"none"``); ``ValueError`` otherwise.

    Parameters
    ----------
    method : str or None
        A key of :data:`CORRECTIONS` (case-insensitive).

    Returns
    -------
    str

    Examples
    --------
    >>> correction_name("FDR_BH"), correction_name(None)
    ('bh', 'none')
    """
    key = "none" if method is None else str(method).lower()
    if key not in CORRECTIONS:
        raise InputError(
            f"correction must be one of {sorted(set(CORRECTIONS))} (or None), got {method!r}"
        )
    return CORRECTIONS[key]


def p_adjust(p, method: str | None = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple testing.

    With the m finite p-values sorted ascending, p_(1) <= ... <= p_(m):

    * ``"bonferroni"``: min(1, m p_i) (family-wise error rate);
    * ``"holm"``: p~_(i) = min(1, max_{j <= i} (m - j + 1) p_(j)) (Holm 1979; FWER, uniformly
      more powerful than Bonferroni);
    * ``"bh"`` (aliases ``"fdr_bh"``, ``"benjamini-hochberg"``): p~_(i) = min(1,
      min_{j >= i} m p_(j) / j) (Benjamini & Hochberg 1995; false discovery rate);
    * ``"none"`` or ``None``: unchanged.

    NaN p-values stay NaN and do not count in m. The values equal
    ``statsmodels.stats.multitest.multipletests(p, method=...)[1]`` (``holm``, ``bonferroni``,
    ``fdr_bh``); a hypothesis is rejected at level alpha when its adjusted p-value is below
    alpha.

    Parameters
    ----------
    p : array-like
        The p-values of one family of tests.
    method : str or None
        ``"holm"`` (default), ``"bonferroni"``, ``"bh"`` or ``"none"``.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the input order.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
    Journal of Statistics 6(2).
    Benjamini, Y., Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B 57(1).

    Examples
    --------
    >>> p_adjust([0.01, 0.04, 0.03, 0.20], "holm")
    array([0.04, 0.09, 0.09, 0.2 ])
    >>> p_adjust([0.01, 0.04, 0.03, 0.20], "bonferroni")
    array([0.04, 0.16, 0.12, 0.8 ])
    >>> p_adjust([0.01, 0.04, 0.03, 0.20], "bh").round(4)
    array([0.04  , 0.0533, 0.0533, 0.2   ])
    """
    name = correction_name(method)
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p must be 1-d, got shape {p.shape}")
    out = p.copy()
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if name == "none" or m == 0:
        return out
    if ((p[ok] < 0) | (p[ok] > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    if name == "bonferroni":
        out[ok] = np.minimum(p[ok] * m, 1.0)
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    ps = p[order]
    if name == "holm":
        adj = np.maximum.accumulate((m - np.arange(m)) * ps)
    else:  # bh
        adj = np.minimum.accumulate((m / np.arange(1, m + 1) * ps)[::-1])[::-1]
    out[order] = np.minimum(adj, 1.0)
    return out
