"""The pool object: what was judged per topic, how it was built, and the reductions on it.

A :class:`Pool` holds

* ``qrels`` — what was judged per topic (``qid``, ``docno``, ``label``; in a simulated pool
  ``-1`` marks a document the strategy asked for that the source qrels never judged);
* ``runs``, ``pooled`` and ``strategy`` — how it was built: a strategy
  (:mod:`pbtools.pooling.strategies`) over the pooled runs;
* ``depth`` — the *contribution depth*: a run contributes a judged document when it ranks it
  within this depth. For depth-d pooling it is d; for a simulated pool it is the deepest best rank
  of a judged document, so that every judged document has a contributor.

The reductions of the pool-bias literature are operations on it, all computed from the one table
of who pooled what (:func:`pbtools.pooling.who_pooled.contrib_table`) with integer codes and numpy
masks, for all units at once: :meth:`Pool.leave_out` (leave-one-run/organisation-out),
:meth:`Pool.take_teams` (take-k-teams), :meth:`Pool.subset` (pools of random run subsets),
:meth:`Pool.shallow` (shallower pools). On a simulated pool they are the same operations on its
judged documents: leaving a unit out unjudges the documents only that unit's runs rank within the
contribution depth (the reference tool instead re-runs the strategy without the unit,
``Pool.getNewInstance``; :meth:`Pool.simulate` over the remaining runs does that).

The functions of :mod:`pbtools.pooling.reductions` are thin wrappers over these methods.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pbtools.errors import warn_deprecated
from pbtools.frames import encode, require_columns
from pbtools.pooling.combinations import SEP, draw_combinations, take_rows
from pbtools.pooling.strategies import Depth, PoolingTask, Strategy, parse, run_strategy
from pbtools.pooling.who_pooled import (
    Contrib,
    contrib_table,
    locate,
    qrels_owner,
    stack_blocks,
    top_rows,
)
from pbtools.validation import validates

__all__ = ["Pool"]


@dataclass(repr=False)
class Pool:
    """What was judged per topic and how the pool was built (module docstring).

    Build one with :meth:`from_depth` (an existing depth-d collection) or :meth:`simulate` (a
    strategy replayed against existing judgments).

    Attributes
    ----------
    qrels : DataFrame
        ``qid``, ``docno``, ``label`` (+ any extra qrels columns of the source).
    runs : DataFrame
        The runs the pool was built over (restricted to ``pooled`` when given).
    strategy : Strategy
        How it was built, e.g. ``Depth(depth=100)``.
    depth : int
        The contribution depth (module docstring).
    pooled : list of str or None
        The pooled run names (None: every run of ``runs``).
    order : DataFrame or None
        Simulated pools: ``qid``, ``docno``, ``step`` (1-based judging order within the topic),
        ``label`` (+ ``prob``, the inclusion probability, for sampling strategies; ``run``, the
        run the document was read from, for move-to-front and MaxMean).
    budget : DataFrame or None
        Simulated pools: ``qid``, ``budget``, ``cost`` (judgments made) per topic.

    Examples
    --------
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d2", "d4", "d5"],
    ...                       ("C", "1"): ["d1", "d6", "d7"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": ["d1", "d2", "d4", "d6"],
    ...                                "label": [1, 1, 0, 1]}))
    >>> pool = Pool.from_depth(runs, qrels, 2)
    >>> pool
    Pool(depth:2 over 3 runs, contribution depth 2: 1 topics, 4 judgments)
    >>> pool.leave_out("run")["left_out"].value_counts().sort_index().tolist()
    [4, 3, 3]
    """

    qrels: pd.DataFrame
    runs: pd.DataFrame
    strategy: Strategy
    depth: int
    pooled: list[str] | None = None
    order: pd.DataFrame | None = field(default=None)
    budget: pd.DataFrame | None = field(default=None)

    def __repr__(self) -> str:
        n_runs = len(self.pooled) if self.pooled is not None else self.runs["name"].nunique()
        return (
            f"Pool({self.strategy.spec} over {n_runs} runs, contribution depth {self.depth}: "
            f"{self.qrels['qid'].nunique()} topics, {len(self.qrels)} judgments)"
        )

    # ----------------------------------------------------------------------------------------
    # construction
    # ----------------------------------------------------------------------------------------

    @classmethod
    @validates(runs="run", qrels="qrels")
    def from_depth(
        cls,
        runs: pd.DataFrame,
        qrels: pd.DataFrame,
        depth: int,
        *,
        pooled: Iterable[str] | None = None,
    ) -> Pool:
        """The pool of a depth-d collection: ``qrels`` judged the top ``depth`` of ``runs``.

        No work is done here: the reductions read the runs' top ``depth`` when called.
        """
        require_columns(qrels, ("qid", "docno", "label"), "qrels")
        names = None if pooled is None else list(map(str, pooled))
        return cls(qrels, runs, Depth(int(depth)), int(depth), names)

    @classmethod
    @validates(runs="run", qrels="qrels")
    def simulate(
        cls,
        runs: pd.DataFrame,
        qrels: pd.DataFrame,
        strategy: Strategy | str,
        budget: int | None = None,
        *,
        total: int | None = None,
        seed: int = 0,
        pooled: Iterable[str] | None = None,
        problem: PoolingTask | None = None,
    ) -> Pool:
        """Replay ``strategy`` over ``runs`` with ``qrels`` as the assessor (Lipani et al.'s
        ``generatePool``).

        Parameters
        ----------
        runs, qrels : DataFrame
            The runs (run columns) and the source judgments. Only the qrels topics are pooled.
        strategy : Strategy or str
            A strategy object or a spec such as ``"rbp:0.8"``
            (:func:`pbtools.pooling.strategies.parse`).
        budget : int, optional
            Judgments per topic (a topic whose runs retrieve fewer documents gets them all).
        total : int, optional
            A total budget spread over the topics instead
            (:func:`pbtools.pooling.strategies.allocate`).
        seed : int
            Seed of the random choices (sampling strategies, tie-breaking of MTF and MaxMean).
        pooled : list of str, optional
            The runs the pool is built from (default: all of ``runs``).
        problem : PoolingTask, optional
            ``PoolingTask(runs, qrels, pooled)`` built once and reused for several simulations.

        Returns
        -------
        Pool
            ``qrels`` holds every judged document with its source label (-1: never judged in the
            source, still one judgment), sorted by topic and docno; ``order`` and ``budget`` as
            in the class docstring.

        Examples
        --------
        >>> from pbtools.frames import as_qrels
        >>> from pbtools.pooling.strategies import from_rankings
        >>> runs = from_rankings({("A", "1"): ["d1", "d2"], ("B", "1"): ["d3", "d1"]})
        >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": ["d1", "d2"], "label": [1, 0]}))
        >>> pool = Pool.simulate(runs, qrels, "take", budget=2)
        >>> pool.qrels
          qid docno  label
        0   1    d1      1
        1   1    d3     -1
        >>> pool.budget
          qid  budget  cost
        0   1       2     2
        """
        strategy = parse(strategy)
        names = None if pooled is None else list(map(str, pooled))
        pb = problem if problem is not None else PoolingTask(runs, qrels, names)
        sel, label, budgets = run_strategy(pb, strategy, budget, total=total, seed=seed)
        qid, docno = pb.ids(sel.t, sel.x)
        step = np.arange(len(sel.t)) - np.searchsorted(sel.t, sel.t) + 1
        order = pd.DataFrame(
            {"qid": qid, "docno": docno, "step": step.astype(np.int32), "label": label}
        )
        for k, v in sel.extra.items():
            order[k] = encode(pd.Series(v, dtype="str")) if k == "run" else v
        key = np.lexsort((order["docno"].cat.codes, sel.t))
        judged = order.iloc[key][["qid", "docno", "label"]].reset_index(drop=True)
        cost = np.bincount(sel.t, minlength=pb.T)
        spent = pd.DataFrame(
            {
                "qid": pd.Categorical.from_codes(
                    np.arange(pb.T), dtype=pd.CategoricalDtype(pb.qids)
                ),
                "budget": budgets,
                "cost": cost,
            }
        )
        reach = int(pb.best[sel.t, sel.x].max()) if len(sel.t) else 0
        return cls(judged, pb.runs, strategy, reach, list(map(str, pb.names)), order, spent)

    # ----------------------------------------------------------------------------------------
    # what was judged
    # ----------------------------------------------------------------------------------------

    @property
    def cost(self) -> int:
        """Judgments made (rows of ``qrels``)."""
        return len(self.qrels)

    def documents(self) -> pd.DataFrame:
        """The judged documents: ``qid``, ``docno`` (qrels order)."""
        return self.qrels[["qid", "docno"]].copy()

    def _contrib(self, unit: str = "run", orgs: pd.DataFrame | None = None) -> Contrib:
        return contrib_table(top_rows(self.runs, self.depth, self.pooled), unit, orgs, self.qrels)

    # ----------------------------------------------------------------------------------------
    # reductions
    # ----------------------------------------------------------------------------------------

    def leave_out(
        self,
        leave_out: str = "run",
        orgs: pd.DataFrame | None = None,
        units: Iterable[str] | None = None,
        *,
        repool: bool = False,
        unit: str | None = None,
    ) -> pd.DataFrame:
        """Reduced qrels for leaving each unit out of the pool, all units at once.

        Lipani §5 / PROTOCOL item 8 (leave-one-organization-out), Sakai §4 (leave-one-team-out),
        Webber §3 (leave-one-run-out). For unit u, the judged documents that *only* u's runs
        rank within the contribution depth become unjudged (their rows are dropped); every
        other judgment is kept. Judged documents no pooled run ranks that deep are kept
        (``repool=False``) or dropped (``repool=True``: for a depth-d pool the reduced qrels of u
        then equal ``repool(runs without u, qrels, d)``, PROTOCOL items 7-8).

        ``leave_out``: the unit, ``"run"`` or ``"org"`` (with ``orgs``: ``name``, ``org``; runs it
        does not list are their own organisation), as everywhere in pbtools (``unit=`` is its
        deprecated spelling here); ``units``: the units to leave out (default: every unit of
        the pooled runs; a unit without pooled runs leaves the qrels unreduced).

        Returns the qrels columns + ``left_out`` (id; sorted categories = the units), one block
        per unit in unit order, qrels order within a block. Join with
        ``frames.judge(runs, reduced)``.

        Examples
        --------
        See the class example: leaving C out unjudges d6, which only C ranks in its top 2.
        """
        require_columns(self.qrels, ("qid", "docno", "label"), "qrels")
        if unit is not None:
            warn_deprecated("Pool.leave_out(unit=...)", "Pool.leave_out(leave_out=...)")
            leave_out = unit
        c = self._contrib(leave_out, orgs)
        owner = qrels_owner(c)
        labels = list(c.units) if units is None else list(dict.fromkeys(map(str, units)))
        ucode = c.units.get_indexer(pd.Index(labels, dtype="str")).astype(np.int64)
        ucode[ucode < 0] = -3  # a unit with no pooled run removes nothing
        keep = owner[None, :] != ucode[:, None]
        if repool:
            keep &= (owner != -2)[None, :]
        return stack_blocks(self.qrels, keep, labels, "left_out")

    def take_teams(
        self,
        k: int = 1,
        unit: str = "org",
        orgs: pd.DataFrame | None = None,
        *,
        teams: Iterable[str] | None = None,
        combos: Iterable[Iterable[str]] | None = None,
        sample: int | None = None,
        seed: int = 0,
    ) -> pd.DataFrame:
        """Take-one-team / take-k-teams relevance data: only documents the chosen teams pooled.

        Sakai §4 and §6: J is replaced by D_t (take-one-team, ``k=1``) or by the union of D_t
        over a set T of teams (take-three-teams, ``k=3``). The combinations are all C(n, k) of
        ``teams`` (default: every unit of the pooled runs), or ``sample`` of them drawn at random
        (seeded), or the explicit list ``combos``. Judged documents that no team of the
        combination ranks within the contribution depth are dropped. ``unit="run"`` takes runs.

        Returns the qrels columns + ``kept`` (id: the combination's units in sorted order joined
        by ``"+"``), one block per combination.

        Examples
        --------
        >>> from pbtools.frames import as_qrels
        >>> from pbtools.pooling.strategies import from_rankings
        >>> runs = from_rankings({("A", "1"): ["d1", "d2"], ("B", "1"): ["d3", "d1"]})
        >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": ["d1", "d2", "d3"],
        ...                                "label": [1, 0, 1]}))
        >>> kept = Pool.from_depth(runs, qrels, 2).take_teams(1, unit="run")
        >>> kept.groupby("kept", observed=True)["docno"].apply(sorted).to_dict()
        {'A': ['d1', 'd2'], 'B': ['d1', 'd3']}
        """
        require_columns(self.qrels, ("qid", "docno", "label"), "qrels")
        c = self._contrib(unit, orgs)
        if combos is not None:
            chosen = [sorted(set(map(str, combo))) for combo in combos]
        else:
            pick = list(c.units) if teams is None else sorted(set(map(str, teams)))
            idx = draw_combinations(len(pick), k, sample, seed)
            chosen = [[pick[i] for i in row] for row in idx]
        member = np.zeros((len(chosen), len(c.units)), dtype=bool)
        for i, combo in enumerate(chosen):  # one row per combination: the membership matrix
            codes_ = c.units.get_indexer(pd.Index(combo, dtype="str"))
            member[i, codes_[codes_ >= 0]] = True
        return take_rows(self.qrels, c, member, [SEP.join(combo) for combo in chosen])

    def subset(
        self,
        size: int | Iterable[int],
        n: int = 10,
        *,
        seed: int = 0,
        unit: str = "run",
        orgs: pd.DataFrame | None = None,
    ) -> pd.DataFrame:
        """Pools of random subsets of the pooled runs (Webber & Park §3: pool width).

        For each ``size`` w, ``n`` distinct random w-subsets of the pooled runs (units with
        ``unit="org"``) are drawn (seeded ``numpy.random.default_rng(seed + i)`` for the i-th
        size, all C(N, w) when there are fewer); each subset's reduced qrels are the judged
        documents some run of the subset ranks within the contribution depth. Returns the qrels
        columns + ``kept`` (the subset's units joined by ``"+"``).

        Examples
        --------
        >>> from pbtools.frames import as_qrels
        >>> from pbtools.pooling.strategies import from_rankings
        >>> runs = from_rankings({("A", "1"): ["d1"], ("B", "1"): ["d2"], ("C", "1"): ["d3"]})
        >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": ["d1", "d2", "d3"],
        ...                                "label": [1, 0, 1]}))
        >>> Pool.from_depth(runs, qrels, 1).subset(2)["kept"].value_counts().sort_index()
        kept
        A+B    2
        A+C    2
        B+C    2
        Name: count, dtype: int64
        """
        require_columns(self.qrels, ("qid", "docno", "label"), "qrels")
        sizes = [size] if isinstance(size, int | np.integer) else list(size)
        c = self._contrib(unit, orgs)
        units = list(c.units)
        idx = [draw_combinations(len(units), int(w), n, seed + i) for i, w in enumerate(sizes)]
        member = np.zeros((sum(len(x) for x in idx), len(units)), dtype=bool)
        labels, row = [], 0
        for block in idx:  # one block per subset size
            for combo in block:
                member[row, combo] = True
                labels.append(SEP.join(units[j] for j in combo))
                row += 1
        return take_rows(self.qrels, c, member, labels)

    def shallow(self, depths: int | Iterable[int] = (50, 10, 1)) -> pd.DataFrame:
        """Shallower pools: the judged documents some pooled run ranks in its top pd (Sakai §7).

        For a depth-d pool and pd ≤ d this is ``repool(runs, qrels, pd)``. All depths come from
        one pass: the best rank any pooled run gives each document. Returns the qrels columns +
        ``depth`` (int32), one block per depth.

        Examples
        --------
        >>> from pbtools.frames import as_qrels
        >>> from pbtools.pooling.strategies import from_rankings
        >>> runs = from_rankings({("A", "1"): ["d1", "d2"], ("B", "1"): ["d3", "d1"]})
        >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": ["d1", "d2", "d3"],
        ...                                "label": [1, 0, 1]}))
        >>> Pool.from_depth(runs, qrels, 2).shallow([1])["docno"].tolist()
        ['d1', 'd3']
        """
        require_columns(self.qrels, ("qid", "docno", "label"), "qrels")
        depths = [int(depths)] if isinstance(depths, int | np.integer) else [int(x) for x in depths]
        top = top_rows(self.runs, max(depths, default=0), self.pooled)
        c = contrib_table(top, "run", None, self.qrels)
        best = np.full(len(c.keys), np.iinfo(np.int32).max, dtype=np.int64)
        np.minimum.at(best, c.row_doc, top["rank"].to_numpy().astype(np.int64))
        loc = locate(c.keys, c.q_key)
        qbest = np.where(loc >= 0, best[np.maximum(loc, 0)], np.iinfo(np.int64).max)
        keep = qbest[None, :] <= np.asarray(depths, dtype=np.int64)[:, None]
        return stack_blocks(self.qrels, keep, depths, "depth")

    def contributions(self, unit: str = "run", orgs: pd.DataFrame | None = None) -> pd.DataFrame:
        """Who pooled what: for each document in the pooled runs' top ``depth``, its units.

        Buckley et al. §1, Sakai §4. Returns ``qid``, ``docno``, ``unit`` (ids) and ``n_units``
        (int32: how many units rank the document within the contribution depth), one row per
        unique (qid, docno, unit), sorted by qid, docno, unit. A document with ``n_units == 1``
        is *unique* to its unit.

        Examples
        --------
        >>> from pbtools.frames import as_qrels
        >>> from pbtools.pooling.strategies import from_rankings
        >>> runs = from_rankings({("A", "1"): ["d1", "d2"], ("B", "1"): ["d3", "d1"]})
        >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": ["d1"], "label": [1]}))
        >>> Pool.from_depth(runs, qrels, 2).contributions()[["docno", "unit", "n_units"]]
          docno unit  n_units
        0    d1    A        2
        1    d1    B        2
        2    d2    A        1
        3    d3    B        1
        """
        c = contrib_table(top_rows(self.runs, self.depth, self.pooled), unit, orgs)
        nd = max(len(c.dcats), 1)
        order = np.lexsort((c.pair_unit, c.pair_doc))
        doc = c.keys[c.pair_doc[order]]
        return pd.DataFrame(
            {
                "qid": pd.Categorical.from_codes(doc // nd, dtype=pd.CategoricalDtype(c.qcats)),
                "docno": pd.Categorical.from_codes(doc % nd, dtype=pd.CategoricalDtype(c.dcats)),
                "unit": pd.Categorical.from_codes(
                    c.pair_unit[order], dtype=pd.CategoricalDtype(c.units)
                ),
                "n_units": c.n_units[c.pair_doc[order]],
            }
        )
