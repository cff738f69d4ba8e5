"""The pooling-strategy protocol: the encoded problem, the assessor, budgets and the one kernel.

A *pooling strategy* decides which documents of a set of runs are judged, per topic, and in
which order, until a budget of judgments is spent. pbtools simulates a strategy from existing
judgments, as the ``generatePool`` command of Lipani et al.'s PoolBiasEstimators does
(``PoolConverter.repoolTo``): the strategy asks for documents in its order, the label comes from
the *source* qrels, and a document the source never judged is recorded as unjudged (label -1)
and still costs one judgment.

=====================  ========================================================================
object                 role
=====================  ========================================================================
:class:`PoolingTask`   the pooled runs encoded once (:class:`pbtools.engine.dense.DenseRuns`:
                       per-topic local document ids, ``D[r, t, i]``), the flat table of every
                       ranked document, best ranks, and the source labels (hidden)
:class:`Assessor`      reveals a label only for a document that is judged, counts the cost
:class:`Strategy`      parameters in ``__init__`` (scikit-learn style), :meth:`Strategy.select`
:func:`allocate`       per-topic budgets from a per-topic or a total budget
:mod:`.selection`      :func:`ranked` (non-adaptive) and :func:`sequential`, **the one loop
                       over judgments** of the adaptive strategies
:func:`run_strategy`   budgets → selection → labels: what :meth:`pbtools.pooling.Pool.simulate`
                       calls
=====================  ========================================================================

Non-adaptive strategies are fully vectorised: :meth:`Strategy.keys` scores every (topic,
document) cell at once and :func:`ranked` sorts them per topic in one ``lexsort``. Adaptive
strategies (those whose next choice depends on the labels seen so far, or on what was already
chosen) give :func:`sequential` a *policy* with a vectorised ``step`` (one choice per active
topic) and ``update``; the loop over judgments lives in :func:`sequential` only, and every
iteration handles all topics at once.

Relevance for the adaptive strategies is ``label > 0``; a document the source never judged
(-1) counts as non-relevant, as in the reference tool (``qRels.getRel(...) > 0``).
"""

from __future__ import annotations

import inspect
from functools import cached_property
from typing import ClassVar

import numpy as np
import pandas as pd

from pbtools import frames
from pbtools.engine.dense import DenseRuns
from pbtools.errors import InputError
from pbtools.frames import as_run, encode, require_columns
from pbtools.pooling.strategies.selection import Selection, ranked

__all__ = [
    "PoolingTask",
    "Assessor",
    "Strategy",
    "allocate",
    "run_strategy",
    "from_rankings",
]


def from_rankings(rankings: dict) -> pd.DataFrame:
    """A run frame from ranked lists: ``{(name, qid): [docno, ...]}`` (best first).

    Scores are ``n, n-1, ..., 1`` for a list of ``n`` documents, so trec order keeps the list
    order. Meant for examples and hand-made tests.

    Examples
    --------
    >>> from pbtools.pooling.strategies import from_rankings
    >>> from_rankings({("A", "1"): ["d1", "d2"]})[["name", "qid", "docno", "rank"]]
      name qid docno  rank
    0    A   1    d1     1
    1    A   1    d2     2
    """
    rows = [
        (name, qid, doc, float(len(docs) - i), i + 1)
        for (name, qid), docs in rankings.items()
        for i, doc in enumerate(docs)
    ]
    return as_run(pd.DataFrame(rows, columns=["name", "qid", "docno", "score", "rank"]))


# --------------------------------------------------------------------------------------------
# the encoded problem and the assessor
# --------------------------------------------------------------------------------------------


class PoolingTask:
    """The pooled runs encoded once for every strategy, with the source qrels to judge from.

    Parameters
    ----------
    runs : DataFrame
        Run columns (``name``, ``qid``, ``docno``, ``score``, ``rank``).
    qrels : DataFrame
        The source judgments (``qid``, ``docno``, ``label``). Only the topics they judge are
        kept: a strategy chooses among the documents the runs rank on those topics.
    pooled : list of str, optional
        Names of the runs the pool is built from (default: every run).

    Attributes
    ----------
    qids : Index
        The T topics (sorted ids); topic ``t`` is ``qids[t]``.
    names : Index
        The R runs (slot ``r`` is ``names[r]``).
    D, length : ndarray
        ``D[r, t, i]``: local id of run r's (i+1)-th document on topic t (-1 padding);
        ``length[r, t]``: its ranking length (:class:`pbtools.engine.dense.DenseRuns`).
    n_docs : ndarray
        Documents the runs retrieve per topic (local ids ``0 .. n_docs[t]-1``).
    rows : dict of ndarray
        Every ranked document once: ``r``, ``t``, ``x`` (local id), ``rank`` (1-based), sorted
        by topic and local id.
    best, count : ndarray
        ``(T, U)``: best rank any run gives the document (0: none), how many runs rank it.

    Examples
    --------
    >>> from pbtools.frames import as_qrels
    >>> runs = from_rankings({("A", "1"): ["d1", "d2"], ("B", "1"): ["d2", "d3"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> p = PoolingTask(runs, qrels)
    >>> p.T, p.R, p.n_docs.tolist(), p.best[0].tolist(), p.count[0].tolist()
    (1, 2, [3], [1, 1, 2], [1, 2, 1])
    """

    def __init__(
        self, runs: pd.DataFrame, qrels: pd.DataFrame, pooled: list[str] | None = None
    ) -> None:
        require_columns(qrels, ("qid", "docno", "label"), "qrels")
        runs = frames.ranked(runs)
        keep = np.ones(len(runs), dtype=bool)
        if pooled is not None:
            name = encode(runs["name"])
            chosen = name.cat.categories.isin(pd.Index(list(map(str, pooled)), dtype="str"))
            keep &= chosen[name.cat.codes.to_numpy()]
        qid = encode(runs["qid"])
        judged = qid.cat.categories.isin(encode(qrels["qid"]).cat.categories.astype("str"))
        keep &= judged[qid.cat.codes.to_numpy()]
        self.runs = runs if keep.all() else runs.loc[keep]
        if len(self.runs) == 0:
            raise InputError("no ranked document of the pooled runs on a judged topic")
        self.enc = enc = DenseRuns([self.runs])
        self.qids, self.names = enc.qids, enc.names
        self.T, self.R, self.U = enc.T, enc.R, enc.U
        self.D, self.length = enc.D, enc.length
        self.tstart = np.searchsorted(enc.universe, np.arange(self.T + 1) * enc.NG)
        self.n_docs = np.diff(self.tstart).astype(np.int64)
        self._label = np.full((self.T, self.U), -1, dtype=np.int16)
        t, x = enc.locate(qrels["qid"], qrels["docno"])
        lab = qrels["label"].to_numpy().astype(np.int16)
        ok = x >= 0
        self._label[t[ok], x[ok]] = np.maximum(lab[ok], -1)

    @cached_property
    def rows(self) -> dict[str, np.ndarray]:
        """Every ranked document once, sorted by (topic, document) cell (sums stream in order)."""
        r, t, i = np.nonzero(self.D >= 0)
        x = self.D[r, t, i].astype(np.int64)
        o = np.argsort(t * self.U + x, kind="stable")
        return {"r": r[o], "t": t[o], "x": x[o], "rank": i[o] + 1}

    @cached_property
    def cell(self) -> np.ndarray:
        """Flat (topic, document) cell of every row: ``t * U + x``."""
        return self.rows["t"] * self.U + self.rows["x"]

    @cached_property
    def topic_run(self) -> np.ndarray:
        """Flat (topic, run) index of every row: ``t * R + r`` (to gather ``(T, R)`` arrays)."""
        return self.rows["t"] * self.R + self.rows["r"]

    def gather(self, per_topic_run: np.ndarray) -> np.ndarray:
        """The value of a ``(T, R)`` array at every row."""
        return np.take(per_topic_run.reshape(-1), self.topic_run)

    @cached_property
    def best(self) -> np.ndarray:
        """``(T, U)`` best rank of each document over the runs (0: not retrieved)."""
        big = np.iinfo(np.int64).max
        flat = np.full(self.T * self.U, big, dtype=np.int64)
        np.minimum.at(flat, self.cell, self.rows["rank"])
        flat[flat == big] = 0
        return flat.reshape(self.T, self.U)

    @cached_property
    def count(self) -> np.ndarray:
        """``(T, U)`` number of runs that rank each document."""
        n = np.bincount(self.cell, minlength=self.T * self.U)
        return n.reshape(self.T, self.U)

    @cached_property
    def score_grid(self) -> np.ndarray:
        """``(R, T, L)`` run scores aligned with :attr:`D` (NaN padding)."""
        S = np.full(self.D.shape, np.nan)
        runs = self.runs
        name, qid = encode(runs["name"]), encode(runs["qid"])
        r = self.names.get_indexer(name.cat.categories)[name.cat.codes.to_numpy()]
        t = self.qids.get_indexer(qid.cat.categories)[qid.cat.codes.to_numpy()]
        S[r, t, runs["rank"].to_numpy() - 1] = runs["score"].to_numpy()
        return S

    @cached_property
    def scores(self) -> np.ndarray:
        """The run score of every row (aligned with :attr:`rows`)."""
        return self.score_grid[self.rows["r"], self.rows["t"], self.rows["rank"] - 1]

    def ranks(self, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``(len(t), R)``: each run's rank of document ``x[i]`` on topic ``t[i]`` (0: none)."""
        r, tt, xx = np.broadcast_arrays(np.arange(self.R)[None, :], t[:, None], x[:, None])
        return self.enc.rank(r, tt, xx)

    def sum_rows(self, weights: np.ndarray) -> np.ndarray:
        """``(T, U)`` sum over the rows of each (topic, document) cell of ``weights``."""
        return np.bincount(self.cell, weights, minlength=self.T * self.U).reshape(self.T, self.U)

    def ids(self, t: np.ndarray, x: np.ndarray) -> tuple[pd.Categorical, pd.Categorical]:
        """``(qid, docno)`` of local documents ``x`` on topics ``t``."""
        key = self.enc.universe[self.tstart[t] + x]
        g = key % self.enc.NG
        qid = pd.Categorical.from_codes(t, dtype=pd.CategoricalDtype(self.qids))
        docno = pd.Categorical.from_codes(g, dtype=pd.CategoricalDtype(self.enc.docs))
        return qid, docno


class Assessor:
    """The simulated assessor: labels from the source qrels, revealed only when judged.

    :meth:`judge` records the documents (a document judged twice costs once) and returns
    ``label > 0``; :meth:`known` gives the labels of documents already judged and refuses any
    other, so an adaptive strategy cannot see a label it has not paid for.

    Examples
    --------
    >>> from pbtools.frames import as_qrels
    >>> runs = from_rankings({("A", "1"): ["d1", "d2"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [2]}))
    >>> a = Assessor(PoolingTask(runs, qrels))
    >>> a.judge(np.array([0, 0]), np.array([1, 0])).tolist(), a.cost.tolist()
    ([True, False], [2])
    >>> a.known(np.array([0]), np.array([0])).tolist()  # d1: never judged in the source
    [-1]
    """

    def __init__(self, problem: PoolingTask) -> None:
        self._label = problem._label
        self.asked = np.zeros((problem.T, problem.U), dtype=bool)
        self.cost = np.zeros(problem.T, dtype=np.int64)

    def judge(self, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Judge documents ``x`` of topics ``t``; returns ``label > 0`` (bool array)."""
        t, x = np.asarray(t, np.int64), np.asarray(x, np.int64)
        new = ~self.asked[t, x]
        key = np.unique(t[new] * self.asked.shape[1] + x[new])
        self.asked.flat[key] = True
        self.cost += np.bincount(key // self.asked.shape[1], minlength=len(self.cost))
        return self._label[t, x] > 0

    def known(self, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Labels (int16; -1: never judged in the source) of documents already judged."""
        if not self.asked[t, x].all():
            raise RuntimeError("a strategy asked for the label of a document it has not judged")
        return self._label[t, x]


# --------------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------------


class Strategy:
    """Base class of the pooling strategies (scikit-learn's parameter protocol).

    A subclass sets :attr:`name` (its registry name), declares its parameters as keyword
    arguments of ``__init__`` (stored unchanged as attributes) and implements either
    :meth:`keys` (non-adaptive: one vectorised scoring of every document, sorted by
    :func:`~pbtools.pooling.strategies.selection.ranked`) or :meth:`select` (adaptive: through
    :func:`~pbtools.pooling.strategies.selection.sequential`). :meth:`check` validates the
    parameters; :meth:`capacity` bounds what it can choose per topic.
    """

    name: ClassVar[str] = ""
    #: the next choice depends on labels judged so far
    adaptive: ClassVar[bool] = False
    #: a budget is required (False: the strategy has a natural size, e.g. depth-d)
    needs_budget: ClassVar[bool] = True

    @classmethod
    def param_names(cls) -> list[str]:
        """The parameters of ``__init__``, in order (the positional order of a spec string)."""
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self) -> dict:
        """The parameters as a dict."""
        return {p: getattr(self, p) for p in self.param_names()}

    def set_params(self, **params) -> Strategy:
        """Set parameters (unknown names raise ``ValueError``); returns ``self``."""
        unknown = set(params) - set(self.param_names())
        if unknown:
            raise InputError(f"{self.name}: unknown parameters {sorted(unknown)}")
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()

    @property
    def spec(self) -> str:
        """The ``NAME[:PARAMS]`` string that :func:`pbtools.pooling.strategies.parse` reads."""
        vals = [
            ",".join(map(str, v)) if isinstance(v, tuple) else str(v)
            for v in self.get_params().values()
        ]
        return ":".join([self.name, *vals])

    def check(self) -> None:
        """Validate the parameters; raise ``ValueError`` naming the bad one."""

    def capacity(self, problem: PoolingTask) -> np.ndarray:
        """How many documents the strategy can choose per topic (default: all retrieved)."""
        return problem.n_docs.copy()

    def keys(
        self, problem: PoolingTask, rng: np.random.Generator
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Non-adaptive strategies: ``(T, U)`` sort keys, most significant first (larger is
        judged earlier), and the mask of the candidate documents."""
        raise NotImplementedError(f"{type(self).__name__} implements neither keys nor select")

    def select(
        self, problem: PoolingTask, assessor: Assessor, budget: np.ndarray, rng: np.random.Generator
    ) -> Selection:
        """The documents to judge per topic, in order, at most ``budget[t]`` on topic t."""
        keys, valid = self.keys(problem, rng)
        return ranked(keys, valid, budget)


def allocate(
    capacity: np.ndarray, budget: int | None = None, total: int | None = None
) -> np.ndarray:
    """Per-topic budgets: ``min(budget, capacity)``, or ``total`` spread over the topics.

    A total budget is water-filled: every topic gets the same share L, capped by its capacity,
    with L the largest level that fits, and the remainder goes one judgment each to the first
    topics (in topic order) that can take more. (The reference tool's
    ``FixedSizePool.findTopicSizes`` also starts from equal shares capped by what the runs
    retrieve, but takes its excess back from the smallest topics.)

    Examples
    --------
    >>> allocate(np.array([3, 10, 10]), budget=5).tolist()
    [3, 5, 5]
    >>> allocate(np.array([3, 10, 10]), total=22).tolist()
    [3, 10, 9]
    """
    cap = np.asarray(capacity, dtype=np.int64)
    if budget is not None and total is not None:
        raise InputError("give a budget per topic or a total budget, not both")
    if budget is None and total is None:
        return cap.copy()
    if budget is not None:
        if int(budget) < 0:
            raise InputError(f"the budget must be a non-negative integer, got {budget!r}")
        return np.minimum(cap, int(budget))
    total = int(total)
    if total < 0:
        raise InputError(f"the total budget must be a non-negative integer, got {total!r}")
    if total >= cap.sum():
        return cap.copy()
    levels = np.arange(int(cap.max()) + 2)
    s = np.sort(cap)
    below = np.concatenate([[0], np.cumsum(s)])[np.searchsorted(s, levels)]
    filled = below + levels * (len(s) - np.searchsorted(s, levels))
    level = int(np.searchsorted(filled, total, side="right")) - 1
    out = np.minimum(cap, level)
    room = np.flatnonzero(cap > level)
    out[room[: total - int(out.sum())]] += 1
    return out


def run_strategy(
    problem: PoolingTask,
    strategy: Strategy,
    budget: int | None = None,
    *,
    total: int | None = None,
    seed: int = 0,
) -> tuple[Selection, np.ndarray, np.ndarray]:
    """Run ``strategy`` on ``problem``: ``(selection, labels, budgets)``.

    ``labels`` are the source labels of the selected documents (int16, -1: never judged in the
    source); ``budgets`` the per-topic budgets (:func:`allocate` over the strategy's
    :meth:`~Strategy.capacity`). ``seed`` seeds ``numpy.random.default_rng`` for the random
    choices (sampling, tie-breaking).
    """
    strategy.check()
    if budget is None and total is None and strategy.needs_budget:
        raise InputError(f"strategy {strategy.name!r} needs a budget (per topic or total)")
    budgets = allocate(strategy.capacity(problem), budget, total)
    assessor = Assessor(problem)
    sel = strategy.select(problem, assessor, budgets, np.random.default_rng(seed))
    assessor.judge(sel.t, sel.x)
    return sel, assessor.known(sel.t, sel.x), budgets
