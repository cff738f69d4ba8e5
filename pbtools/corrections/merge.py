"""The merge operator r' = r_p ∘ r_u (Lipani et al. 2015 §3, Eq. 2) on run frames.

Every document d of the pooled run r_p gets the new rank key

    μ(d) = (1 − α)·ρ(d, r_p) + α·ρ(d, r_u)   if d ∈ r_u (a *shared* document)
    μ(d) = ρ(d, r_p)                          otherwise (an *r_p-exclusive* document)

and r' lists r_p's documents by ascending μ; documents of r_u absent from r_p are never added,
and r' exists only on the topics both runs have (PROTOCOL item 11). Ties in μ follow ``tie``
(:data:`TIES`; see :mod:`pbtools.engine.merge`, which does the work on the dense layout for
every pair and topic at once).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.engine.dense import DenseRuns
from pbtools.engine.merge import TIES, merge_rows, weight_fraction
from pbtools.errors import InputError
from pbtools.frames import ranked, require_columns

__all__ = ["TIES", "merge"]


def merge(
    pooled: pd.DataFrame,
    unpooled: pd.DataFrame,
    *,
    weight: float = 1.0,
    tie: str = "exclusive_first",
    depth: int | None = None,
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """r' = r_p ∘ r_u for every (unpooled run, pooled run, topic) at once (Lipani Eq. 2).

    Parameters
    ----------
    pooled, unpooled
        Run frames (``name``, ``qid``, ``docno``, ``score``, ``rank``); ranks are taken from
        trec order (the frames are re-sorted if they are not in it). ``unpooled`` may hold many
        runs (leave-one-out).
    weight
        Weight of r_u's rank in μ, 0 ≤ α ≤ 1 (α = 0 returns r_p unchanged; the paper uses 1).
    tie
        ``"exclusive_first"`` (default, the paper's text) or ``"lipani2015"`` (PROTOCOL 11).
    depth
        Keep only the top ``depth`` of each r' (the largest cut-off needed); ``None`` keeps all.
    pairs
        Optional frame with columns ``unpooled`` and ``name`` (pooled run) restricting which
        pairs are merged; default: every pair whose names differ.

    Returns
    -------
    DataFrame with ``unpooled`` (id: r_u's name), ``name`` (id: r_p's name), ``qid``, ``docno``,
    ``rank`` (int32, the rank in r'), ``p_rank`` (ρ(d, r_p)), ``u_rank`` (ρ(d, r_u), 0 when d ∉
    r_u), sorted by (unpooled, name, qid, rank). Topics that r_u lacks are absent.

    The work is done by :func:`pbtools.engine.merge.merge_rows` on the dense per-topic layout.
    """
    if tie not in TIES:
        raise InputError(f"tie must be one of {TIES}, got {tie!r}")
    weight_fraction(weight)
    P, U = ranked(pooled), ranked(unpooled)
    enc = DenseRuns([P, U])
    ps, us = enc.slots(0), enc.slots(1)
    p_names, u_names = enc.names[ps], enc.names[us]
    if pairs is None:
        pu, pp = np.meshgrid(np.arange(len(us)), np.arange(len(ps)), indexing="ij")
        pu, pp = pu.ravel(), pp.ravel()
        keep = u_names.to_numpy()[pu] != p_names.to_numpy()[pp]
        pu, pp = pu[keep], pp[keep]
    else:
        require_columns(pairs, ("unpooled", "name"), "pairs")
        pu = u_names.get_indexer(pd.Index(pairs["unpooled"].astype(str), dtype="str"))
        pp = p_names.get_indexer(pd.Index(pairs["name"].astype(str), dtype="str"))
        ok = (pu >= 0) & (pp >= 0)
        pu, pp = pu[ok].astype(np.int64), pp[ok].astype(np.int64)
    o = np.lexsort((pp, pu))
    pu, pp = pu[o], pp[o]
    pair, t, M, PR, UR = merge_rows(
        enc, us[pu], ps[pp], weight=weight, tie=tie, depth=depth, ranks=True
    )
    i, j = np.nonzero(M >= 0)
    row, x = pair[i], M[i, j]
    tt = t[i]
    gdoc = enc.universe[enc.tstart[tt] + x] % enc.NG
    return pd.DataFrame(
        {
            "unpooled": pd.Categorical.from_codes(pu[row], dtype=pd.CategoricalDtype(u_names)),
            "name": pd.Categorical.from_codes(pp[row], dtype=pd.CategoricalDtype(p_names)),
            "qid": pd.Categorical.from_codes(tt, dtype=pd.CategoricalDtype(enc.qids)),
            "docno": pd.Categorical.from_codes(gdoc, dtype=pd.CategoricalDtype(enc.docs)),
            "rank": (j + 1).astype(np.int32),
            "p_rank": PR[i, j].astype(np.int32),
            "u_rank": UR[i, j].astype(np.int32),
        }
    )
