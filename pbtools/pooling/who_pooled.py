"""Who pooled what: the contributions table behind every pool, reduction and report.

A pool is built from the top-d rows of its runs. :func:`contrib_table` encodes them once into
integer codes — the unique documents (qid, docno), the unique (unit, document) pairs, how many
units pooled each document and, when only one did, which (its *owner*). Reductions
(:mod:`pbtools.pooling.reductions`), reports (:mod:`pbtools.pooling.contributions`) and the
estimators all read this one table instead of recomputing who pooled what.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pbtools.engine.build import unit_map
from pbtools.errors import InputError
from pbtools.frames import (
    encode,
    id_dtype,
    mapped_codes,
    ranked,
    used_codes,
)

__all__ = [
    "top_rows",
    "Contrib",
    "contrib_table",
    "locate",
    "qrels_owner",
    "keyed",
    "unit_column",
    "stack_blocks",
]


# --------------------------------------------------------------------------------------------
# internals: top-d rows, units, shared integer keys
# --------------------------------------------------------------------------------------------


def top_rows(runs: pd.DataFrame, depth: int, pooled: Iterable[str] | None = None) -> pd.DataFrame:
    """Rows of ``runs`` ranked 1..depth (of the ``pooled`` runs only, when given)."""
    if depth is None or int(depth) < 0:
        raise InputError(f"pool depth must be a non-negative integer, got {depth!r}")
    runs = ranked(runs)
    mask = runs["rank"].to_numpy() <= int(depth)
    if pooled is not None:
        name = encode(runs["name"])
        chosen = name.cat.categories.isin(pd.Index(list(map(str, pooled)), dtype="str"))
        mask &= chosen[name.cat.codes.to_numpy()]
    return runs.loc[mask]


@dataclass
class Contrib:
    """Unique (unit, document) pairs of a pool in integer codes, with a shared id dictionary."""

    units: pd.Index  # unit names, sorted (unit code = position)
    qcats: pd.Index  # qid dictionary shared with the qrels passed in (if any)
    dcats: pd.Index  # docno dictionary shared with the qrels passed in (if any)
    keys: np.ndarray  # sorted unique document keys q * nd + d (int64)
    row_doc: np.ndarray  # index into ``keys`` of each top-d row
    pair_unit: np.ndarray  # unit code of each unique (unit, doc) pair
    pair_doc: np.ndarray  # index into ``keys`` of each pair
    n_units: np.ndarray  # units per document (aligned with ``keys``)
    owner: np.ndarray  # unit code of the only contributor, -1 when n_units > 1
    q_key: np.ndarray | None = field(default=None)  # qrels document keys (when qrels given)


def contrib_table(
    top: pd.DataFrame, unit: str, orgs: pd.DataFrame | None, qrels: pd.DataFrame | None = None
) -> Contrib:
    """Build the contributions of the top-d rows ``top``; optionally key ``qrels`` alike.

    Ids are re-coded over the (sorted) dictionaries of the ids the top-d rows use, so the work
    is proportional to the pool, not to the runs' or qrels' dictionaries.
    """
    name_code, names = used_codes(top["name"])  # only the runs that have top-d rows
    umap = unit_map(names, unit, orgs)
    units = pd.Index(sorted(set(umap.tolist())), dtype="str")
    cat_unit = units.get_indexer(umap.to_numpy()).astype(np.int64)
    row_unit = cat_unit[name_code] if len(top) else np.zeros(0, np.int64)
    tq, qcats = used_codes(top["qid"])
    td, dcats = used_codes(top["docno"])
    nd = np.int64(max(len(dcats), 1))
    keys, kidx = np.unique(tq * nd + td, return_inverse=True)
    kidx = kidx.ravel().astype(np.int64)
    nk = np.int64(max(len(keys), 1))
    pair = np.unique(row_unit * nk + kidx)
    pair_unit, pair_doc = pair // nk, pair % nk
    n_units = np.bincount(pair_doc, minlength=len(keys)).astype(np.int32)
    owner = np.full(len(keys), -1, dtype=np.int64)
    single = n_units[pair_doc] == 1
    owner[pair_doc[single]] = pair_unit[single]
    q_key = None
    if qrels is not None:
        qq, qd = mapped_codes(qrels["qid"], qcats), mapped_codes(qrels["docno"], dcats)
        q_key = np.where((qq >= 0) & (qd >= 0), qq * nd + qd, -1)
    return Contrib(units, qcats, dcats, keys, kidx, pair_unit, pair_doc, n_units, owner, q_key)


def locate(keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Index of each ``query`` value in the sorted unique ``keys``; -1 where absent."""
    if len(keys) == 0:
        return np.full(len(query), -1, dtype=np.int64)
    pos = np.searchsorted(keys, query)
    pos_c = np.minimum(pos, len(keys) - 1)
    return np.where(keys[pos_c] == query, pos_c, -1)


def qrels_owner(c: Contrib) -> np.ndarray:
    """Per qrels row: the only contributing unit's code, -1 if several, -2 if none."""
    loc = locate(c.keys, c.q_key)
    return np.where(loc >= 0, c.owner[np.maximum(loc, 0)], -2)


def keyed(
    qrels: pd.DataFrame,
    rows: np.ndarray,
    column: str,
    values: pd.Series | np.ndarray,
) -> pd.DataFrame:
    """``qrels`` rows ``rows`` (reindexed) with the key column ``column`` appended."""
    base = [c for c in qrels.columns if c != column]
    out = qrels[base].iloc[rows].reset_index(drop=True)
    out[column] = values
    return out


def unit_column(labels: Sequence[str], idx: np.ndarray) -> pd.Categorical:
    """A dictionary-encoded column taking ``labels[idx]`` (categories sorted)."""
    dtype = id_dtype(labels)
    remap = dtype.categories.get_indexer(pd.Index(list(labels), dtype="str"))
    return pd.Categorical.from_codes(remap[idx], dtype=dtype)


def stack_blocks(
    qrels: pd.DataFrame,
    keep: np.ndarray,
    labels: Sequence,
    column: str,
) -> pd.DataFrame:
    """Stack the qrels rows kept by each row of the (blocks x qrels) mask, keyed by ``column``."""
    flat = np.flatnonzero(keep.ravel())
    n = len(qrels)
    block, rows = (flat // n, flat % n) if n else (flat, flat)
    if column == "depth":
        values = np.asarray(labels, dtype=np.int32)[block]
    else:
        values = unit_column([str(v) for v in labels], block)
    return keyed(qrels, rows, column, values)
