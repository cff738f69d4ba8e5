"""Depth-d pools, contributions and reduced qrels (leave-out, take-teams, shallow, subsets).

A *depth-d pool* of a set of runs is the set of (qid, docno) that at least one run ranks in its
top d on that topic (trec_eval order, :func:`pbtools.frames.trec_order`). A *unit* is what an
experiment withdraws from the pool: a run (``unit="run"``) or an organisation (``unit="org"``, the
runs mapped to it by an orgs frame ``name``, ``org``). Every reduction here is derived from one
*contributions* table — the unique (unit, qid, docno) triples of the pooled runs' top d with the
number of units that pooled each document — and is computed for all units at once with integer
codes and numpy masks, never by rebuilding qrels per unit.

The reductions are operations of the pool object (:class:`pbtools.pooling.Pool`);
:func:`leave_one_out`, :func:`take_teams`, :func:`subset_pool`, :func:`shallow` and
:func:`contributions` are thin wrappers over ``Pool.from_depth(runs, qrels, depth)`` and keep
their signatures and outputs.

Conventions shared by every function:

* ``runs`` are the *pooled* runs unless a ``pooled`` argument (list of run names) restricts them;
  pool inference (:func:`infer_pool`) tells which runs of a collection were pooled and to which
  depth.
* Runs whose name the orgs frame does not list form an organisation of their own, named after the
  run (TREC-2 by tag: the merged ``prceo1`` run of ``input.prc1``/``input.prc2``).
* Reduced qrels keep the qrels schema plus one key column — ``left_out`` (leave-outs), ``kept``
  (take-teams, subsets) or ``depth`` (shallow pools) — so that
  ``frames.judge(runs, reduced)`` scores every run against every reduction in one join.
* ``repool=False`` (default) keeps qrels documents that no pooled run placed in its top d (they
  were judged for some other reason, e.g. an unpooled run or a deeper pool); ``repool=True``
  drops them, which is the re-pooled semantic of PROTOCOL-lipani2015 items 7-8.

Reporting on a collection's pool (unique contributions, the ``pbtools pool`` summary) is
:mod:`pbtools.pooling.contributions`; its two functions are re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from pbtools.engine.build import unit_map
from pbtools.frames import require_columns, trec_order
from pbtools.pooling.combinations import SEP
from pbtools.pooling.inference import PoolInfo, infer_pool
from pbtools.pooling.pool import Pool
from pbtools.pooling.topruns import top_fraction
from pbtools.pooling.who_pooled import contrib_table, locate, top_rows
from pbtools.validation import validates

__all__ = [
    "pool",
    "repool",
    "contributions",
    "leave_one_out",
    "take_teams",
    "shallow",
    "subset_pool",
    "top_fraction",
    "unit_map",
    "infer_pool",
    "PoolInfo",
    "SEP",
]

#: qrels of a pool whose judgments are not needed (contributions only)
_NO_QRELS = pd.DataFrame({"qid": [], "docno": [], "label": []})

# --------------------------------------------------------------------------------------------
# pools and contributions
# --------------------------------------------------------------------------------------------


@validates(keys="keys", runs="run")
def pool(runs: pd.DataFrame, depth: int, keys: Sequence[str] = ()) -> pd.DataFrame:
    """The depth-d pool: every (qid, docno) some run ranks in its top ``depth`` (Lipani §5).

    Parameters
    ----------
    runs : DataFrame
        Run columns (``name``, ``qid``, ``docno``, ``score``, ``rank``; reordered into trec
        order when they are not). ``depth``: int.
    keys : sequence of str
        Optional columns of ``runs`` (e.g. ``left_out``) that make several pools at once, one
        per key value.

    Returns
    -------
    DataFrame
        ``keys`` + ``qid``, ``docno`` (ids), unique rows sorted by (keys, qid, docno).

    Examples
    --------
    Runs a (docs 1, 2, 3), b (2, 4) and c (5, 1), in score order; their top 2 pool 1, 2, 4, 5.

    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": list("aaabbcc"), "qid": "1",
    ...                             "docno": list("1232451"), "score": [3, 2, 1, 3, 2, 2, 1]}))
    >>> pool(runs, 2)["docno"].tolist()
    ['1', '2', '4', '5']
    """
    cols = [*keys, "qid", "docno"]
    if keys:  # rank within (keys, name, qid): the same run may appear under several keys
        ranked = trec_order(runs, by=(*keys, "name", "qid"))
        top = ranked.loc[ranked["rank"].to_numpy() <= int(depth), cols]
        return top.drop_duplicates().sort_values(cols).reset_index(drop=True)
    c = contrib_table(top_rows(runs, depth), "run", None)
    nd = max(len(c.dcats), 1)
    q, d = c.keys // nd, c.keys % nd
    return pd.DataFrame(
        {
            "qid": pd.Categorical.from_codes(q, dtype=pd.CategoricalDtype(c.qcats)),
            "docno": pd.Categorical.from_codes(d, dtype=pd.CategoricalDtype(c.dcats)),
        }
    )


@validates(runs="run", qrels="qrels")
def repool(runs: pd.DataFrame, qrels: pd.DataFrame, depth: int) -> pd.DataFrame:
    """Qrels restricted to the depth-d pool of ``runs`` (PROTOCOL-lipani2015 item 7).

    Per topic, only the original judgments of documents in the top ``depth`` of at least one of
    ``runs`` survive.

    Parameters
    ----------
    qrels : DataFrame
        ``qid``, ``docno``, ``label`` (+ any extra columns, kept).
    runs : DataFrame
        Run columns. ``depth``: int.

    Returns
    -------
    DataFrame
        The surviving qrels rows in their original order, schema and dtypes unchanged (fresh
        RangeIndex).

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": list("aaabbcc"), "qid": "1",
    ...                             "docno": list("1232451"), "score": [3, 2, 1, 3, 2, 2, 1]}))
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("123459"), "label": [1, 0, 1, 1, 0, 1]})
    >>> repool(runs, qrels, 2)["docno"].tolist()  # 3 and 9 are in no run's top 2
    ['1', '2', '4', '5']
    """
    require_columns(qrels, ("qid", "docno", "label"), "qrels")
    c = contrib_table(top_rows(runs, depth), "run", None, qrels)
    keep = locate(c.keys, c.q_key) >= 0
    return qrels.loc[keep].reset_index(drop=True)


def contributions(
    runs: pd.DataFrame, depth: int, unit: str = "run", orgs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Who pooled what: for each pooled (qid, docno), the units that ranked it in their top d.

    Buckley et al. §1 (unique relevant documents), Sakai §4 (leave-one-team-out).

    Parameters
    ----------
    runs : DataFrame
        The pooled runs (run columns). ``depth``: int.
    unit : {"run", "org"}
        ``"run"`` (unit = run name) or ``"org"`` (unit = the run's organisation from ``orgs``
        columns ``name``, ``org``; unlisted runs are their own organisation).

    Returns
    -------
    DataFrame
        ``qid``, ``docno``, ``unit`` (ids) and ``n_units`` (int32: how many units pooled the
        document), one row per unique (qid, docno, unit), sorted by qid, docno, unit. A document
        with ``n_units == 1`` is *unique* to its unit: leaving that unit out makes it unjudged.

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": list("aaabbcc"), "qid": "1",
    ...                             "docno": list("1232451"), "score": [3, 2, 1, 3, 2, 2, 1]}))
    >>> contributions(runs, 2).query("n_units == 1")  # runs as in :func:`pool`
      qid docno unit  n_units
    4   1     4    b        1
    5   1     5    c        1
    """
    return Pool.from_depth(runs, _NO_QRELS, depth).contributions(unit, orgs)


# --------------------------------------------------------------------------------------------
# leave-one-out
# --------------------------------------------------------------------------------------------


def leave_one_out(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    depth: int,
    leave_out: str = "run",
    orgs: pd.DataFrame | None = None,
    units: Iterable[str] | None = None,
    *,
    pooled: Iterable[str] | None = None,
    repool: bool = False,
) -> pd.DataFrame:
    """Reduced qrels for leaving each unit out of the pool, all units at once.

    Lipani §5 / PROTOCOL item 8 (leave-one-organization-out), Sakai §4 (leave-one-team-out),
    Webber §3 (leave-one-run-out). For unit u, the documents that *only* u's runs placed in
    their top ``depth`` become unjudged (their rows are dropped); every other judgment is kept.
    Qrels documents that no pooled run placed in its top d are kept (``repool=False``, default)
    or dropped (``repool=True``: then the reduced qrels of u equal ``repool(qrels,
    runs without u, depth)``, PROTOCOL items 7-8).

    Parameters
    ----------
    runs, qrels : DataFrame
        Run columns: the pooled runs, or restrict them with ``pooled`` (run names); ``qid``,
        ``docno``, ``label`` (+ extra columns, kept).
    leave_out, orgs, units
        The unit left out, ``"run"`` or ``"org"`` (with ``orgs``: ``name``, ``org``); the
        units to leave out (default: every unit of the pooled runs; one without pooled runs
        leaves the qrels unreduced).

    Returns
    -------
    DataFrame
        The qrels columns + ``left_out`` (id; sorted categories = the units), one block per unit
        in unit order, qrels order within a block. Join with ``frames.judge(runs, reduced)``.

    Examples
    --------
    Leaving b out unjudges doc 4, leaving c out doc 5; no doc is unique to a. With
    ``repool=True`` docs 3 and 9, which no run pooled, go too (runs as in :func:`pool`).

    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": list("aaabbcc"), "qid": "1",
    ...                             "docno": list("1232451"), "score": [3, 2, 1, 3, 2, 2, 1]}))
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("123459"), "label": [1, 0, 1, 1, 0, 1]})
    >>> lo = leave_one_out(runs, qrels, 2)
    >>> lo.groupby("left_out", observed=True)["docno"].agg("".join).to_dict()
    {'a': '123459', 'b': '12359', 'c': '12349'}
    >>> lo = leave_one_out(runs, qrels, 2, repool=True)
    >>> lo.groupby("left_out", observed=True)["docno"].agg("".join).to_dict()
    {'a': '1245', 'b': '125', 'c': '124'}
    """
    p = Pool.from_depth(runs, qrels, depth, pooled=pooled)
    return p.leave_out(leave_out, orgs, units, repool=repool)


# --------------------------------------------------------------------------------------------
# take-k-teams, pool widths, shallow pools
# --------------------------------------------------------------------------------------------


def take_teams(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    depth: int,
    k: int = 1,
    unit: str = "org",
    orgs: pd.DataFrame | None = None,
    *,
    teams: Iterable[str] | None = None,
    combos: Iterable[Iterable[str]] | None = None,
    sample: int | None = None,
    seed: int = 0,
    pooled: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Take-one-team / take-k-teams relevance data: only documents the chosen teams pooled.

    Sakai §4 and §6: J is replaced by D_t (take-one-team, ``k=1``) or by the union of D_t over a
    set T of teams (take-three-teams, ``k=3``). The combinations are all C(n, k) of ``teams``
    (default: every unit of the pooled runs), or ``sample`` of them drawn at random (seeded), or
    the explicit list ``combos`` (e.g. Sakai's three "ordinary" teams). Qrels documents that no
    team of the combination placed in its top ``depth`` are dropped (this includes documents
    never contributed by any pooled run). ``unit="run"`` takes runs instead of teams.

    Parameters
    ----------
    qrels, runs, depth, unit, orgs, pooled
        As in :func:`leave_one_out`; ``k``, ``teams``, ``combos``, ``sample``, ``seed``: above.

    Returns
    -------
    DataFrame
        The qrels columns + ``kept`` (id: the combination's units in sorted order joined by
        ``"+"``), one block per combination.

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": list("aaabbcc"), "qid": "1",
    ...                             "docno": list("1232451"), "score": [3, 2, 1, 3, 2, 2, 1]}))
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("123459"), "label": [1, 0, 1, 1, 0, 1]})
    >>> orgs = pd.DataFrame({"name": ["a", "b", "c"], "org": ["X", "X", "Y"]})  # a, b: X
    >>> tt = take_teams(runs, qrels, 2, orgs=orgs)
    >>> tt.groupby("kept", observed=True)["docno"].agg("".join).to_dict()
    {'X': '124', 'Y': '15'}
    >>> tt = take_teams(runs, qrels, 2, k=2, unit="run")
    >>> tt.groupby("kept", observed=True)["docno"].agg("".join).to_dict()
    {'a+b': '124', 'a+c': '125', 'b+c': '1245'}
    """
    p = Pool.from_depth(runs, qrels, depth, pooled=pooled)
    return p.take_teams(k, unit, orgs, teams=teams, combos=combos, sample=sample, seed=seed)


def subset_pool(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    depth: int,
    size: int | Iterable[int],
    n: int = 10,
    *,
    seed: int = 0,
    pooled: Iterable[str] | None = None,
    unit: str = "run",
    orgs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Pools of random subsets of the pooled runs (Webber & Park §3: pool width experiments).

    For each ``size`` w, ``n`` distinct random w-subsets of the pooled runs (units with
    ``unit="org"``) are drawn (seeded ``numpy.random.default_rng(seed)``, all C(N, w) when there
    are fewer); each subset's reduced qrels are the qrels documents some run of the subset placed
    in its top ``depth``.

    Parameters
    ----------
    qrels, runs, depth, pooled, unit, orgs
        As in :func:`leave_one_out`; ``size`` (int or ints), ``n``, ``seed``: above.

    Returns
    -------
    DataFrame
        The qrels columns + ``kept`` (the subset's runs joined by ``"+"``).

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": list("aaabbcc"), "qid": "1",
    ...                             "docno": list("1232451"), "score": [3, 2, 1, 3, 2, 2, 1]}))
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("123459"), "label": [1, 0, 1, 1, 0, 1]})
    >>> sp = subset_pool(runs, qrels, 2, size=2, n=2)  # 2 of the 3 pairs, seed 0
    >>> sp.groupby("kept", observed=True)["docno"].agg("".join).to_dict()
    {'a+b': '124', 'b+c': '1245'}
    """
    p = Pool.from_depth(runs, qrels, depth, pooled=pooled)
    return p.subset(size, n, seed=seed, unit=unit, orgs=orgs)


def shallow(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    depths: int | Iterable[int] = (50, 10, 1),
    *,
    pooled: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Shallow-pool relevance data: re-pool at depths pd (< d) from the pooled runs (Sakai §7).

    For every ``pd`` in ``depths`` the reduced qrels are ``repool(runs, qrels, pd)``: the qrels
    documents that some pooled run ranks in its top pd. All depths come from one pass: the best
    rank any pooled run gives each document.

    Parameters
    ----------
    qrels, runs, pooled
        As in :func:`leave_one_out`; ``depths``: an int or several.

    Returns
    -------
    DataFrame
        The qrels columns + ``depth`` (int32).

    Examples
    --------
    The top 1 of runs a, b, c (as in :func:`pool`) holds docs 1, 2 and 5:

    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": list("aaabbcc"), "qid": "1",
    ...                             "docno": list("1232451"), "score": [3, 2, 1, 3, 2, 2, 1]}))
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("123459"), "label": [1, 0, 1, 1, 0, 1]})
    >>> shallow(runs, qrels, [2, 1]).groupby("depth")["docno"].agg("".join).to_dict()
    {1: '125', 2: '1245'}
    """
    depths = [int(depths)] if isinstance(depths, int | np.integer) else [int(x) for x in depths]
    return Pool.from_depth(runs, qrels, max(depths, default=0), pooled=pooled).shallow(depths)
