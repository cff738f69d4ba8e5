"""Half-up rounding of published numbers: the one rounding pbtools applies anywhere.

Lipani et al.'s code rounds every P@n and P̄@n to 4 decimals before combining them, and selects
the top 75 % of runs by rounded scores (PROTOCOL-lipani2015 items 9-10). Both go through
:func:`round_half_up`.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["round_half_up"]


def round_half_up(x, decimals: int = 4):
    """Round half away from zero to ``decimals`` places, robust to the binary noise of averaging.

    A value is first snapped to 9 significant digits past the rounding position, so that a mean
    such as ``0.1235`` computed as ``0.12349999999999999`` rounds up, as it does in decimal
    arithmetic (numpy's ``round`` rounds half to even, and ``0.00125`` to ``0.0012``). Hence a
    value within 5e-10 units of the last kept decimal of a half (``0.12344999999999``) also
    rounds up: averages of ≤ 10⁶ per-topic values carry no information that fine.

    Parameters
    ----------
    x : float, array-like or Series
        Values (NaN stays NaN).
    decimals : int
        Decimal places kept (PROTOCOL-lipani2015 item 10: 4).

    Returns
    -------
    The rounded values, of the type given (a Series keeps its index and name).

    Examples
    --------
    >>> round_half_up(0.00125), round_half_up(0.12349999999999999), round_half_up(-0.00015)
    (0.0013, 0.1235, -0.0002)
    >>> import numpy as np
    >>> round_half_up(np.array([0.12344, 0.12345, 0.12344999999999]))
    array([0.1234, 0.1235, 0.1235])
    """
    arr = np.asarray(x, dtype=np.float64)
    scale = 10.0**decimals
    snapped = np.round(arr * scale, 9 - decimals if decimals < 9 else 0)
    out = np.sign(snapped) * np.floor(np.abs(snapped) + 0.5) / scale
    pd = sys.modules.get("pandas")  # a Series can only come from a loaded pandas
    if pd is not None and isinstance(x, pd.Series):
        return pd.Series(out, index=x.index, name=x.name)
    return out if out.ndim else float(out)
