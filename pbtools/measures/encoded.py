"""Per-topic values of runs and qrels held as codes and dictionaries (no pandas).

The command line's ``pbtools evaluate`` reads :class:`~pbtools.io.encoded.EncodedRuns` and
:class:`~pbtools.io.encoded.EncodedQrels` and scores them here: the run ⋈ qrels join on codes
(:func:`pbtools.joins.judged_labels`, as :func:`pbtools.frames.judge`), the grouping, trec order
and kernels of :class:`~.arrays.Grouping` (as :func:`~pbtools.measures.compute`), the coverage
report of :mod:`~.topics` and the averages of :mod:`~.averages` (as
:func:`~pbtools.measures.aggregate`). The codes handed to the grouping are those the frame path
hands it (ids over sorted dictionaries), so the values, their order and the averages are the
same to the last bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pbtools.idarrays import map_into, merge_dictionaries
from pbtools.joins import LABEL_DTYPE, judged_labels
from pbtools.measures import kernels as K
from pbtools.measures.arrays import Grouping, kernel_labels
from pbtools.measures.averages import trec_averages
from pbtools.measures.names import Measure
from pbtools.measures.stages import stage

__all__ = ["PerTopic", "score_encoded", "topic_table", "sorted_union"]


@dataclass
class PerTopic:
    """Per-topic values: group ``g`` is run ``names[name[g]]`` on topic ``qids[qid[g]]``, with
    ``values[g, j]`` of ``measures[j]`` (``residual``: RBP's, None without an RBP measure;
    ``texts``: the strings of string measures, by measure index). Groups by run, then topic
    (the rows of :func:`~pbtools.measures.compute`'s frame, measures inside)."""

    names: list
    qids: list
    measures: list
    name: np.ndarray
    qid: np.ndarray
    values: np.ndarray
    residual: np.ndarray | None
    texts: dict

    def rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(group, measure, value)`` of the long layout: one row per (group, measure)."""
        G, M = self.values.shape
        return np.repeat(np.arange(G), M), np.tile(np.arange(M), G), self.values.ravel()

    def averages(self):
        """:func:`~.averages.trec_averages` of these values: ``(run, measure, value,
        residual)``, run codes into :attr:`names`."""
        group, measure, value = self.rows()
        res = None if self.residual is None else self.residual.ravel()
        return trec_averages(self.name[group], measure, value, res, self.measures)


def sorted_union(a, b) -> tuple[list, np.ndarray | None, np.ndarray | None]:
    """One sorted dictionary of two sorted ``pyarrow`` string dictionaries (``strcmp`` order,
    :func:`pbtools.idarrays.merge_dictionaries`, as :func:`pbtools.ids.unify`) as a list, and
    each one's map into it (None: the same dictionary, codes unchanged).

    Examples
    --------
    >>> import pyarrow as pa
    >>> union, ma, mb = sorted_union(pa.array(["1", "3"]), pa.array(["2", "3"]))
    >>> union, ma.tolist(), mb.tolist()
    (['1', '2', '3'], [0, 2], [1, 2])
    """
    union, maps = merge_dictionaries([a, b])
    return (union.tolist(), None, None) if maps is None else (union.tolist(), *maps)


def _through(mapping: np.ndarray | None, codes: np.ndarray) -> np.ndarray:
    """``codes`` mapped (None: unchanged)."""
    if mapping is None:
        return np.asarray(codes)
    return mapping[codes] if len(codes) else np.zeros(0, np.int64)


def score_encoded(runs, qrels, measures: list[Measure], topics: str = "judged") -> PerTopic:
    """The per-topic values of ``measures`` for encoded runs and qrels: what
    ``compute(judge(runs, qrels), qrels, measures, topics=topics)`` holds, as arrays.

    Parameters
    ----------
    runs : pbtools.io.encoded.EncodedRuns
    qrels : pbtools.io.encoded.EncodedQrels
    measures : list of Measure
    topics : {"judged", "all", "answered"}

    Returns
    -------
    PerTopic

    Examples
    --------
    >>> import numpy as np, pyarrow as pa
    >>> from types import SimpleNamespace as NS
    >>> from pbtools.measures.names import parse_all
    >>> runs = NS(names=pa.array(["a"]), qids=pa.array(["1"]), docnos=pa.array(["d1", "d2"]),
    ...           name=np.zeros(2, np.int32), qid=np.zeros(2, np.int32),
    ...           docno=np.array([0, 1], np.int32), score=np.array([2.0, 1.0]),
    ...           rank=np.array([1, 2], np.int32))
    >>> qrels = NS(qids=pa.array(["1"]), docnos=pa.array(["d2"]), qid=np.zeros(1, np.int32),
    ...            docno=np.zeros(1, np.int32), label=np.array([1], np.int16))
    >>> score_encoded(runs, qrels, parse_all(["P@2", "RR"])).values.tolist()
    [[0.5, 0.5]]
    """
    # the join (frames.judge): codes into the runs' dictionaries
    qmap = map_into(qrels.qids, runs.qids)
    dmap = map_into(qrels.docnos, runs.docnos)
    qqc, qdc = _through(qmap, qrels.qid), _through(dmap, qrels.docno)
    # the kernels' labels of the qrels rows, looked up for every run row (UNJUDGED: none)
    # (int16 as the qrels' labels: the codes fit, and a run row's label is half the memory)
    qlab = kernel_labels(np.asarray(qrels.label), np.ones(len(qrels.label), dtype=bool))
    qlab = qlab.astype(LABEL_DTYPE)
    label, _, dup = judged_labels(
        [runs.qid, runs.docno],
        [qqc, qdc],
        qlab,
        [len(runs.qids), len(runs.docnos)],
        missing=K.UNJUDGED,
    )
    if dup is not None:  # the readers refuse repeated judgments; frames.judge's message
        raise ValueError(
            f"qrels judge (qid={qrels.qids[int(qrels.qid[dup])]}, "
            f"docno={qrels.docnos[int(qrels.docno[dup])]}) more than once"
        )
    stage("judge")
    # the grouping (measures.compute): topics over the sorted union of both dictionaries
    qids, run_q, qrels_q = sorted_union(runs.qids, qrels.qids)
    setup = Grouping(
        [],
        np.asarray(runs.name),
        _through(run_q, runs.qid),
        np.asarray(runs.score, dtype=np.float64),
        np.asarray(runs.docno),
        label,
        [],
        _through(qrels_q, qrels.qid),
        np.asarray(qrels.label, dtype=np.int64),
        [],
        len(runs.names),
        len(qids),
        topics,
        rank=np.asarray(runs.rank),  # (trec order: each row's place, checked)
    )
    if topics == "all":
        setup.add_missing_topics()
    stage("group set-up")
    texts: dict = {}
    values, resid = setup.scores(list(measures), texts)
    order = setup.order()
    grp = setup.groups
    rbp = any(m.base == "RBP" for m in measures)
    out = PerTopic(
        runs.names.to_pylist(),
        qids,
        list(measures),
        grp["name"][order],
        grp["qid"][order],
        values[order],
        resid[order] if rbp else None,
        {j: t[order] for j, t in texts.items()},
    )
    stage("order")
    return out


def topic_table(runs, qrels):
    """The inputs of :func:`~.topics.coverage_messages` for encoded runs and qrels: ``(has,
    judged, names, qids)``, topics over the sorted union of both dictionaries."""
    qids, run_q, qrels_q = sorted_union(runs.qids, qrels.qids)
    name, qid = np.asarray(runs.name), _through(run_q, runs.qid)
    # a row whose (run, topic) is the previous row's adds nothing: the first row of each stretch
    heads = np.flatnonzero(np.r_[True, (name[1:] != name[:-1]) | (qid[1:] != qid[:-1])])
    heads = heads[: len(name)]  # (no row: none)
    has = np.zeros((len(runs.names), len(qids)), dtype=bool)
    has[name[heads], qid[heads]] = True
    judged = np.zeros(len(qids), dtype=bool)
    judged[_through(qrels_q, qrels.qid)] = True
    return has, judged, runs.names.to_pylist(), qids
