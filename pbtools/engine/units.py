"""Leave-out units and R_p: the unit of each run (:func:`unit_map`: its name or its
organisation) and each run to score's pooled runs of another key (:class:`PairSpec`; PROTOCOL
-lipani2015 item 12). Built here once, for :mod:`pbtools.engine.build` and the leave-out
experiments."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.frames import require_columns
from pbtools.validation import validates

__all__ = ["PairSpec", "unit_map"]


@validates(orgs="orgs")
def unit_map(
    names: Iterable[str],
    unit: str = "run",
    orgs: pd.DataFrame | None = None,
) -> pd.Series:
    """The unit of each run name: the name itself (``unit="run"``) or its organisation.

    ``orgs`` (columns ``name``, ``org``) is required for ``unit="org"``; a run it does not list is
    an organisation of its own, named after the run. Returns a ``str`` Series indexed by name.
    """
    names = pd.Index(pd.unique(np.asarray(list(map(str, names)), dtype=object)), dtype="str")
    if unit == "run":
        return pd.Series(names, index=names, dtype="str")
    if unit != "org":
        raise InputError(f"unit must be 'run' or 'org', got {unit!r}")
    if orgs is None:
        raise InputError("unit='org' needs an orgs frame (columns name, org)")
    require_columns(orgs, ("name", "org"), "orgs")
    m = pd.Series(
        orgs["org"].astype("str").to_numpy(),
        index=pd.Index(orgs["name"].astype("str").to_numpy(), dtype="str"),
    )
    m = m[~m.index.duplicated(keep="first")]
    out = pd.Series(m.reindex(names).to_numpy(), index=names, dtype="str")
    return out.fillna(pd.Series(names, index=names, dtype="str"))


class PairSpec:
    """R_p of each run to score: the pooled runs of the block whose key differs from its own.

    ``u_key`` (one per run to score) and ``p_key`` (one per run of ``block``) are integer
    codes: a run to score is paired with every run of the block of another key (its own slot
    under ``rp="run"``, its unit under ``rp="org"``), in block order.

    Examples
    --------
    >>> spec = PairSpec(np.array([0, 1]), np.array([0, 1, 1]), np.array([10, 11, 12]))
    >>> [a.tolist() for a in spec.pairs(0, 2)]
    [[0, 0, 1], [11, 12, 10]]
    """

    def __init__(self, u_key: np.ndarray, p_key: np.ndarray, block: np.ndarray):
        self.u_key, self.p_key, self.block = u_key, p_key, block

    @classmethod
    def from_labels(cls, u_labels, p_labels, block: np.ndarray) -> PairSpec:
        """The spec of string keys (run names or units), coded over their union.

        >>> spec = PairSpec.from_labels(["o1", "o2"], ["o1", "o2", "o2"], np.array([4, 5, 6]))
        >>> [a.tolist() for a in spec.pairs(0, 2)]
        [[0, 0, 1], [5, 6, 4]]
        """
        u = pd.Index(list(u_labels), dtype="str")
        p = pd.Index(list(p_labels), dtype="str")
        keys = u.append(p).unique()
        return cls(keys.get_indexer(u), keys.get_indexer(p), np.asarray(block))

    def pairs(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """``pair_u`` (index into the runs to score) and ``pair_p`` (slot) of runs ``lo:hi``,
        in (run, block) order."""
        pu, pi = np.nonzero(self.u_key[lo:hi, None] != self.p_key[None, :])
        return pu.astype(np.int64) + lo, self.block[pi]
