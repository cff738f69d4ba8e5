"""Evaluation measures, parsed from names, computed per topic in one vectorised pass.

Names follow ir_measures' grammar ``BASE(param=value, ...)@cutoff``; trec_eval names are
accepted on input (:func:`parse`). The grammar lives in :mod:`~.names` (:class:`Measure`,
:func:`parse`, :data:`MEASURES`, :func:`measure_names`, in the package). Per-topic values match
trec_eval 9/10 (``m_*.c`` in usnistgov/trec_eval) to the last bit where trec_eval has the measure.

Relevance: a label ``>= rel`` is relevant (default 1), ``0 <= label < rel`` judged non-relevant,
a missing or negative label unjudged; ``(rel=2)`` is trec_eval ``-l2`` for the binary measures.
Gains (nDCG, Q) are the relevant labels: ``nDCG(rel=r)`` gives labels below r gain 0 in the run
and the ideal. trec_eval's ndcg ignores ``-l``, so its ``-l2`` ndcg is pbtools' ``nDCG`` (topic
301 of ``qrels.rel_level``: 0.1396; ``nDCG(rel=2)`` 0.0288; ``tests/measures/test_ndcg_rel.py``).
What each measure computes, with its trec_eval source file, and trec_eval's command line in
``pbtools evaluate``: ``docs/measures.md``. String measures (``Relstring``) fill a ``text``
column and have no average; ``GMAP``/``GMBpref`` average by trec_eval's geometric mean.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.frames import ID_COLUMNS, encode, judge, require_columns
from pbtools.io.memory import release_memory
from pbtools.measures.averages import trec_means
from pbtools.measures.names import parse, parse_all
from pbtools.measures.registry import QRELS_SCORERS
from pbtools.measures.scoring import compute
from pbtools.measures.topics import CoverageWarning, topic_coverage, topics_mode, warn_coverage
from pbtools.validation import validates

__all__ = [
    "compute",
    "evaluate",
    "aggregate",
    "CoverageWarning",
    "topic_coverage",
    "warn_coverage",
]


@validates(keys="keys", runs="run", qrels="qrels")
def evaluate(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    measures,
    *,
    keys: Sequence[str] = (),
    per_topic: bool = False,
    topics: str | None = None,
    all_topics: bool = False,
    warn: bool = True,
    lenient: bool = False,
) -> pd.DataFrame:
    """Judge ``runs`` with ``qrels`` (:func:`frames.judge`) and :func:`compute` ``measures``.

    Returns the per-topic frame when ``per_topic``, else the :func:`aggregate` averages.
    ``topics`` (:mod:`pbtools.measures.topics`): ``"judged"`` (default, trec_eval), ``"all"``
    (trec_eval ``-c``, deprecated spelling ``all_topics=True``: qrels topics missing from a run
    score as an empty ranking, 0 for every measure but NumRel, Unjudged (1) and the RBP residual) or
    ``"answered"`` (every topic the run answers; one the qrels lack scores 0). Unless
    ``warn=False``, a :class:`CoverageWarning` names runs that lack judged topics or answer
    unjudged ones (:func:`topic_coverage`), so no topic leaves an average silently. Qrels with
    a ``stratum`` column are a sampled pool's: scored by its estimators (``xinfAP``, ``infAP``,
    ``statAP``, …: :mod:`pbtools.measures.sampled`), plain measures refused.

    Parameters
    ----------
    runs, qrels : DataFrame
        ``name`` (optional), ``qid``, ``docno``, ``score``; ``qid``, ``docno``, ``label``
        (other arguments: as in :func:`compute`), checked by :mod:`pbtools.validation`
        (``lenient=True``: repeated rows dropped with a warning instead of refused).

    Returns
    -------
    DataFrame
        ``keys…``, ``name``, ``measure``, ``value`` (and ``qid`` when ``per_topic``).

    Examples
    --------
    ``a`` ranks docs 1 (label 1), 2 (unjudged), 3 (0); R = 2 (1, 4): AP = P@1 / R = 0.5, nDCG@3
    = 1 ÷ (2 + 1/log2 3) = 0.380. ``b`` finds doc 1 at rank 3: AP = (1/3) / 2.

    >>> import pandas as pd
    >>> runs = pd.DataFrame({"name": list("aaabbb"), "qid": "1", "docno": list("123321"),
    ...                      "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("134"), "label": [1, 0, 2]})
    >>> evaluate(runs, qrels, ["AP", "nDCG@3"]).round(4)
      name measure   value
    0    a      AP  0.5000
    1    a  nDCG@3  0.3801
    2    b      AP  0.1667
    3    b  nDCG@3  0.1900
    """
    keys = list(keys)
    mode = topics_mode(topics, all_topics)
    ms = parse_all(measures)  # unknown measures fail before any work
    for column, scorer in QRELS_SCORERS.items():  # a sampled pool's qrels: its estimators
        if column in qrels.columns:
            return scorer(runs, qrels, ms, keys=keys, per_topic=per_topic, topics=mode)
    if "name" not in runs.columns:  # a PyTerrier result frame: one run
        runs = runs.assign(name="run")
    if warn and not keys:
        warn_coverage(runs, qrels, topics=mode)
    judged = judge(runs, qrels, keys=keys)
    release_memory()  # judging's temporaries (a few row-sized arrays), before scoring
    pt = compute(judged, qrels, ms, keys, topics=mode)
    return pt if per_topic else aggregate(pt)


def aggregate(
    per_topic: pd.DataFrame, *, qrels: pd.DataFrame | None = None, topics=None, all_topics=False
) -> pd.DataFrame:
    """trec_eval's ``all`` line: the mean over the topics evaluated (``meas_avg.c``).

    ``NumRet``, ``NumRel`` and ``NumRelRet`` (any parameters) are summed, as trec_eval does.
    With ``topics="all"`` (``all_topics=True``: deprecated) and ``qrels`` (trec_eval ``-c``) every
    qrels topic of the key values counts: topics missing from ``per_topic`` score empty rankings.

    Parameters
    ----------
    per_topic : DataFrame
        The :func:`compute` frame (extra columns but ``qid``/``value``/``residual``: keys).

    Returns
    -------
    DataFrame
        ``keys…``, ``name``, ``measure``, ``value`` (+ ``residual`` if present).

    Examples
    --------
    >>> import pandas as pd
    >>> pt = pd.DataFrame({"name": "a", "qid": list("1212"), "value": [0.5, 0.0, 3.0, 2.0],
    ...                    "measure": ["P@2", "P@2", "NumRet", "NumRet"]})
    >>> aggregate(pt).to_numpy().tolist()  # P@2 averaged, NumRet summed
    [['a', 'P@2', 0.25], ['a', 'NumRet', 5.0]]
    """
    require_columns(per_topic, ("name", "qid", "measure", "value"), "per-topic results")
    keys = [c for c in per_topic.columns if c not in _NOT_KEYS]
    pt = per_topic
    kinds = {m: parse(m) for m in pd.unique(pt["measure"].astype(str))}
    if any(k.text for k in kinds.values()):  # string measures have no average (trec_eval)
        pt = pt[~pt["measure"].astype(str).map({m: k.text for m, k in kinds.items()})]
    pt = pt.drop(columns=["text"], errors="ignore")
    if topics_mode(topics, all_topics) == "all":
        if qrels is None:
            raise ValueError('aggregate(topics="all") needs the qrels')
        pt = _fill_missing(pt, qrels, keys)
    by = [*keys, "name", "measure"]
    cols = ["value"] + (["residual"] if "residual" in pt.columns else [])
    # the groups numbered by first appearance, as groupby(sort=False) numbers them
    group = pt.groupby(by, observed=True, sort=False).ngroup().to_numpy()
    first = np.unique(group, return_index=True)[1]
    measure = pt["measure"].astype(str).to_numpy()[first]
    summed = np.array([kinds[m].summed for m in measure], dtype=bool)
    geometric = np.array([kinds[m].geometric for m in measure], dtype=bool)
    value = pt["value"].to_numpy(dtype=np.float64)
    residual = pt["residual"].to_numpy(dtype=np.float64) if "residual" in cols else None
    # one pandas block (a frame built with both columns at once) decides its NaNs together
    joint = residual is not None and _one_block(pt, "value", "residual")
    mean, res = trec_means(group, value, residual, summed, geometric, joint)
    out = pt[by].iloc[first].reset_index(drop=True)
    out["value"] = mean
    if res is not None:
        out["residual"] = res
    for c in ("name", "measure", *[k for k in keys if k in ID_COLUMNS]):
        out[c] = encode(out[c].astype(str))
    return out[[*by, *cols]]


def _one_block(frame: pd.DataFrame, a: str, b: str) -> bool:
    """Whether pandas holds columns ``a`` and ``b`` of ``frame`` in one block: its grouped
    reductions decide a block's NaNs together (:mod:`~.averages`). Read from the frame's block
    manager (``_mgr.blknos``: not public, as the rule itself is not)."""
    blknos = getattr(getattr(frame, "_mgr", None), "blknos", None)
    if blknos is None:  # another manager: the columns' arrays have one root when in one block
        return _root(frame[a].to_numpy()) is _root(frame[b].to_numpy())
    i, j = frame.columns.get_indexer([a, b])
    return bool(blknos[i] == blknos[j])


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


_NOT_KEYS = ("name", "qid", "measure", "value", "residual", "text")


def _fill_missing(per_topic: pd.DataFrame, qrels: pd.DataFrame, keys: list[str]):
    """``per_topic`` with the rows of every qrels topic a (keys, run) lacks: an empty ranking's
    values, computed by :func:`compute` (trec_eval ``-c``)."""
    measures = list(dict.fromkeys(per_topic["measure"].astype(str)))
    runs = per_topic[[*keys, "name"]].drop_duplicates()
    fake = runs.reset_index(drop=True).assign(qid="", docno="", score=0.0)
    fake["label"] = pd.array([pd.NA] * len(fake), dtype="Int16")
    empty = compute(fake, qrels, measures, keys, topics="all")
    have = per_topic[[*keys, "name", "qid"]].drop_duplicates().astype(str)
    ek = empty[[*keys, "name", "qid"]].astype(str)
    merged = ek.merge(have.assign(_have=True), how="left", on=[*keys, "name", "qid"])
    add = empty[merged["_have"].isna().to_numpy()]
    add = add.assign(measure=add["measure"].astype(str).map({str(parse(m)): m for m in measures}))
    cols = list(per_topic.columns)
    both = pd.concat(
        [
            per_topic.astype({c: str for c in ("name", "qid", "measure")}),
            add[cols].astype({c: str for c in ("name", "qid", "measure")}),
        ],
        ignore_index=True,
    )
    return both
