"""The data model: column schemas, id dictionaries, trec_eval order and the run ⋈ qrels join.

Every frame in pbtools is long-format, one row per fact, with PyTerrier's column names:

=============  =============================================================================
frame          columns (dtype)
=============  =============================================================================
run(s)         ``name``, ``qid``, ``docno`` (ids), ``score`` (float64), ``rank`` (int32)
qrels          ``qid``, ``docno`` (ids), ``label`` (int16; > 0 relevant, 0 judged non-relevant,
               < 0 pooled but unjudged)
orgs           ``name``, ``org`` (ids)
judged run     run columns + ``label`` (nullable ``Int16``; ``<NA>`` = unjudged)
per-topic      ``name``, ``qid``, ``measure`` (ids), ``value`` (float64) + experiment keys
averages       ``name``, ``measure``, ``value`` + experiment keys
=============  =============================================================================

**Ids** (run tags, topic ids, document numbers, organisations, measure names) are strings at the
boundary — TREC qids such as ``MB001`` and ``001`` exist, so they are never turned into numbers —
and *dictionary-encoded* inside: a pandas ``Categorical`` whose categories are pandas' Arrow-backed
``str`` dtype, sorted in byte (``strcmp``) order. Because the dictionary is sorted, comparing the
integer codes compares the strings, which is what makes :func:`trec_order` a pure integer sort, and
joins between frames are integer joins once both sides share one dictionary (:func:`unify`). The
dictionary encoding maps one-to-one onto Arrow's ``dictionary<int32, string>`` type, so Parquet
files written by :mod:`pbtools.io` keep it.

**trec_eval order.** Within a run and topic, documents are ordered by ``score`` descending, ties
broken by ``docno`` descending (``strcmp``), exactly as trec_eval 9/10 do; the rank column of the
file is ignored for ordering. A NaN score (read only with ``lenient=True``) comes after every
number, as in the reference tool (trec_eval's own NaN order is platform-dependent). ``rank`` is
then rewritten as 1..n in that order. Every module that needs a ranking calls
:func:`trec_order`; nothing else sorts runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.errors import InputError, TrecFormatError, TrecFormatWarning  # noqa: F401 (re-exported)
from pbtools.ids import (  # re-exported: the id dictionaries are part of the data model
    ID_COLUMNS,
    categorical_from_arrow,
    codes,
    codes_into,
    encode,
    encode_ids,
    id_dtype,
    mapped_codes,
    positions_in,
    unify,
    used_codes,
)
from pbtools.joins import LABEL_DTYPE, composite_key, judged_labels
from pbtools.order import (  # noqa: F401 (re-exported: trec_eval order, pandas-free)
    RANK_DTYPE,
    SCORE_DTYPE,
    group_starts,
    ranks_from_starts,
    trec_sort_order,
)

__all__ = [
    "ID_COLUMNS",
    "RUN_COLUMNS",
    "QRELS_COLUMNS",
    "ORGS_COLUMNS",
    "RESULT_COLUMNS",
    "AVERAGE_COLUMNS",
    "SCORE_DTYPE",
    "RANK_DTYPE",
    "LABEL_DTYPE",
    "JUDGED_LABEL_DTYPE",
    "categorical_from_arrow",
    "codes",
    "codes_into",
    "encode",
    "encode_ids",
    "id_dtype",
    "mapped_codes",
    "unify",
    "used_codes",
    "positions_in",
    "require_columns",
    "as_run",
    "as_qrels",
    "group_starts",
    "ranks_from_starts",
    "trec_sort_order",
    "trec_order",
    "is_trec_ordered",
    "ranked",
    "composite_key",
    "judge",
    "TrecFormatError",
    "TrecFormatWarning",
]

RUN_COLUMNS: tuple[str, ...] = ("name", "qid", "docno", "score", "rank")
QRELS_COLUMNS: tuple[str, ...] = ("qid", "docno", "label")
ORGS_COLUMNS: tuple[str, ...] = ("name", "org")
RESULT_COLUMNS: tuple[str, ...] = ("name", "qid", "measure", "value")
AVERAGE_COLUMNS: tuple[str, ...] = ("name", "measure", "value")


JUDGED_LABEL_DTYPE = "Int16"


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------


def require_columns(df: pd.DataFrame, required: Sequence[str], what: str = "frame") -> None:
    """Raise ``ValueError`` naming every required column that ``df`` lacks."""
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(
            f"{what} lacks column(s) {missing}; it has {list(df.columns)} "
            f"(expected at least {list(required)})"
        )


def as_run(df: pd.DataFrame, *, order: bool = True) -> pd.DataFrame:
    """Coerce a frame to the run schema: ids encoded, score float64, rank int32 in trec order.

    Parameters
    ----------
    df : DataFrame
        ``qid``, ``docno``, ``score`` and either ``name`` or a single run (a ``name`` column is
        then filled with ``"run"``). Extra columns are kept after the schema columns.
    order : bool
        Put rows into trec_eval order and rewrite ``rank`` (:func:`trec_order`).

    Returns
    -------
    DataFrame

    Examples
    --------
    >>> import pandas as pd
    >>> run = as_run(pd.DataFrame({"qid": 1, "docno": ["d1", "d2", "d3"], "score": [1, 2, 2]}))
    >>> run[["name", "docno", "score", "rank"]].to_numpy().tolist()
    [['run', 'd3', 2.0, 1], ['run', 'd2', 2.0, 2], ['run', 'd1', 1.0, 3]]
    """
    require_columns(df, ("qid", "docno", "score"), "run")
    out = df.copy(deep=False)
    if "name" not in out.columns:
        out["name"] = "run"
    for c in ("name", "qid", "docno"):
        out[c] = encode(out[c])
    out["score"] = pd.to_numeric(out["score"]).astype(SCORE_DTYPE)
    if "rank" not in out.columns:
        out["rank"] = 0
    out["rank"] = out["rank"].astype(RANK_DTYPE)
    extra = [c for c in out.columns if c not in RUN_COLUMNS]
    out = out[list(RUN_COLUMNS) + extra]
    return trec_order(out) if order else out


def as_qrels(df: pd.DataFrame) -> pd.DataFrame:
    """Coerce a frame to the qrels schema (``qid``, ``docno``, ``label`` int16, + key columns).

    Parameters
    ----------
    df : DataFrame
        Also with ir_measures' ``query_id``/``doc_id``/``relevance`` names.

    Returns
    -------
    DataFrame

    Examples
    --------
    >>> import pandas as pd
    >>> q = as_qrels(pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d3"], "relevance": [2, 0]}))
    >>> q.columns.tolist(), str(q["label"].dtype)
    (['qid', 'docno', 'label'], 'int16')
    """
    out = df.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    require_columns(out, QRELS_COLUMNS, "qrels")
    out = out.copy(deep=False)
    for c in ("qid", "docno"):
        out[c] = encode(out[c])
    out["label"] = pd.to_numeric(out["label"]).astype(LABEL_DTYPE)
    extra = [c for c in out.columns if c not in QRELS_COLUMNS]
    return out[list(QRELS_COLUMNS) + extra]


# --------------------------------------------------------------------------------------------
# trec_eval order
# --------------------------------------------------------------------------------------------


def trec_order(runs: pd.DataFrame, by: Sequence[str] = ("name", "qid")) -> pd.DataFrame:
    """Sort runs into trec_eval order and rewrite ``rank`` as 1..n within each (name, qid).

    Order: the grouping keys ``by`` (ascending dictionary order), then ``score`` descending, then
    ``docno`` descending — trec_eval's ``qsort`` comparator (``te_form_res_rels.c``): higher score
    first, equal scores by ``strcmp(docno)`` descending. Extra key columns (e.g. ``left_out``) can
    be added to ``by`` to rank several variants of the same run at once.

    Parameters
    ----------
    runs : DataFrame
        ``by``, ``docno``, ``score``. ``by``: sequence of str.

    Returns
    -------
    DataFrame
        A new frame with a fresh RangeIndex; the input is not modified.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"name": "a", "qid": "1", "docno": ["d1", "d2", "d3"], "score": 2.0})
    >>> trec_order(runs)["docno"].tolist()  # equal scores: docno descending
    ['d3', 'd2', 'd1']
    """
    require_columns(runs, (*by, "docno", "score"), "run")
    keys = [
        runs[c].to_numpy() if pd.api.types.is_numeric_dtype(runs[c].dtype) else codes(runs[c])
        for c in by
    ]
    doc = codes(runs["docno"]).astype(np.int64)
    score = runs["score"].to_numpy(dtype=np.float64)
    order = trec_sort_order(keys, score, doc)
    out = runs.iloc[order].reset_index(drop=True)
    sorted_keys = [k[order] for k in keys]
    out["rank"] = ranks_from_starts(group_starts(*sorted_keys))
    return out


def is_trec_ordered(runs: pd.DataFrame) -> bool:
    """True when ``runs`` is already in trec order with ranks 1..n (cheap check, no sort)."""
    if len(runs) == 0:
        return True
    name, qid = codes(runs["name"]), codes(runs["qid"])
    start = group_starts(name, qid)
    if not np.array_equal(runs["rank"].to_numpy(), ranks_from_starts(start)):
        return False
    score = runs["score"].to_numpy(dtype=np.float64)
    doc = codes(runs["docno"])
    same = ~start[1:]
    ok = (score[1:] < score[:-1]) | ((score[1:] == score[:-1]) & (doc[1:] <= doc[:-1]))
    nan = np.isnan(score)
    if nan.any():  # NaN is below every number; NaNs among themselves by docno
        both = nan[1:] & nan[:-1]
        ok = np.where(both, doc[1:] <= doc[:-1], ok | (nan[1:] & ~nan[:-1]))
    return bool(np.all(ok[same]))


def ranked(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` in trec order with ranks 1..n: returned as they are when they already are,
    else coerced to the run schema and sorted (:func:`as_run`)."""
    require_columns(runs, ("qid", "docno", "score"), "run")
    if "rank" in runs.columns and "name" in runs.columns and is_trec_ordered(runs):
        return runs
    return as_run(runs)


# --------------------------------------------------------------------------------------------
# run ⋈ qrels
# --------------------------------------------------------------------------------------------


def judge(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    keys: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Attach relevance labels to runs: the run ⋈ qrels left join on (qid, docno).

    ``label`` is the qrels label (nullable ``Int16``), ``<NA>`` where the document is not in the
    qrels (unjudged). Labels < 0 in the qrels ("pooled but unjudged") are kept as they are; the
    measures treat them as unjudged.

    ``keys`` are extra columns of ``qrels`` that distinguish several relevance sets in one frame
    (e.g. ``left_out`` for leave-one-out reduced qrels). A key column also present in ``runs`` is
    joined on; a key column only in ``qrels`` multiplies the runs: every run row appears once per
    key value, labelled with that key's judgments. Default: every non-schema column of ``qrels``.
    The join is an integer search over a shared id dictionary (no string hashing), and the output
    keeps the run order, key-major when the runs are multiplied.

    Raises ``ValueError`` if the qrels hold a (keys, qid, docno) that the runs retrieve twice
    (duplicates elsewhere cannot change a label; :func:`pbtools.io.read_qrels` rejects them all).

    Parameters
    ----------
    runs, qrels : DataFrame
        ``qid``, ``docno`` (+ any columns); ``qid``, ``docno``, ``label`` (+ ``keys``).

    Returns
    -------
    DataFrame

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"name": "a", "qid": "1", "docno": ["d1", "d2"], "score": [2.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": "d1", "label": [1, 0], "left_out": ["x", "y"]})
    >>> judge(runs, qrels)["label"].tolist()  # x: d1, d2, then y: d1, d2 (d2 unjudged)
    [1, <NA>, 0, <NA>]
    """
    require_columns(runs, ("qid", "docno"), "run")
    require_columns(qrels, QRELS_COLUMNS, "qrels")
    if keys is None:
        keys = [c for c in qrels.columns if c not in QRELS_COLUMNS]
    keys = list(keys)
    shared = [k for k in keys if k in runs.columns]
    only_q = [k for k in keys if k not in runs.columns]

    rqc, qqc, nq = codes_into(runs["qid"], qrels["qid"])
    rdc, qdc, nd = codes_into(runs["docno"], qrels["docno"])
    key_codes_r, key_codes_q, key_sizes = [], [], []
    for k in shared:
        a, b, size = codes_into(runs[k], qrels[k])
        key_codes_r.append(a)
        key_codes_q.append(b)
        key_sizes.append(size)

    out = runs
    if only_q:
        combo = qrels[only_q].drop_duplicates().reset_index(drop=True)
        m = len(combo)
        n = len(runs)
        out = runs.iloc[np.tile(np.arange(n), m)].reset_index(drop=True)
        for k in only_q:
            col = encode(combo[k]) if k in ID_COLUMNS else combo[k]
            vals = col.iloc[np.repeat(np.arange(m), n)].reset_index(drop=True)
            out[k] = vals.astype(col.dtype) if k in ID_COLUMNS else vals.to_numpy()
        # code of the key combination, per qrels row and per output row
        combo_idx = pd.MultiIndex.from_frame(combo)
        q_combo = combo_idx.get_indexer(pd.MultiIndex.from_frame(qrels[only_q]))
        key_codes_q.append(q_combo)
        key_codes_r = [np.tile(c, m) for c in key_codes_r]
        key_codes_r.append(np.repeat(np.arange(m), n))
        key_sizes.append(m)
        rqc, rdc = np.tile(rqc, m), np.tile(rdc, m)
    else:
        out = runs.reset_index(drop=True).copy(deep=False)

    lab, hit, dup = judged_labels(
        [*key_codes_r, rqc, rdc],
        [*key_codes_q, qqc, qdc],
        qrels["label"].to_numpy(),
        [*key_sizes, nq, nd],
    )
    if dup is not None:
        row = qrels.iloc[dup]
        raise ValueError(
            f"qrels judge ({', '.join(f'{k}={row[k]}' for k in keys)}"
            f"{', ' if keys else ''}qid={row['qid']}, docno={row['docno']}) more than once"
        )
    out["label"] = pd.arrays.IntegerArray(lab, ~hit)
    return out
