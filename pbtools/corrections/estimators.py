"""Scoring new runs against one pool: :func:`correct` and the scikit-learn style estimators.

:mod:`pbtools.corrections` is the vectorised core (:func:`~pbtools.corrections.estimate`: many
unpooled runs, each with its own qrels block and its own R_p). This module is its interface for
one pool: :func:`correct` (the CLI's entry point) builds the R_p pairs and, with ``leave_out``,
the reduced qrels and the true score, then calls the core; the classes wrap :func:`correct`.

Every class follows scikit-learn's estimator protocol:

- **parameters in** ``__init__`` — the constructor only stores its arguments, under their own
  names (the measures, the protocol preset, the pool depth d and the estimator's choices); no
  work happens there, so ``get_params()`` returns exactly what was passed;
- ``fit(qrels, runs, orgs=None)`` remembers the qrels Q, the pooled runs R_p and the run →
  organisation map, infers d when it was not given, and returns ``self``; fitted state ends in
  ``_`` (``qrels_``, ``runs_``, ``orgs_``, ``depth_``);
- ``score(run_or_runs, leave_out=None)`` returns the tidy result frame of
  :func:`pbtools.corrections.estimate` (``name``, ``measure``, ``estimator``, ``value`` + the
  indicators) for one or more unpooled runs; ``leave_out="run"``/``"org"`` first withdraws a
  pooled run's unit, as in :func:`correct`;
- ``get_params(deep=True)`` returns the constructor parameters.

The classes hold no arithmetic of their own: they call :func:`correct` /
:func:`~pbtools.corrections.estimate`, so the vectorised core and the classes never disagree.

=================  ===========================================================================
class              implements
=================  ===========================================================================
``TrueScore``      the ground truth: the run's score with its unit pooled, on the re-pooled
                   qrels (Lipani et al. 2015 §5; PROTOCOL-lipani2015 item 14)
``ReducedPool``    P@n(r_u, Q) on the reduced qrels, unjudged = non-relevant: the lower bound
                   of Lipani et al. 2015 §3-§4 and the uncorrected baseline of §5.1
``Condensed``      the condensed-list score, unjudged documents removed (Sakai 2008 §3;
                   Webber & Park 2009 §2) — an upward-biased baseline
``Lipani``         Lipani et al. 2015 §4, Algorithm 1: s + k̄·max(Δk, 0) when a §3.2
                   indicator fires (``indicator``: λ by default, ΔP, ΔP̄ or ``always``)
``WebberOnRuns``   Webber & Park 2009 Algorithm 1 (inference from pooled systems, with their
                   replace-the-withdrawn-run refinement; PROTOCOL-lipani2015 item 13)
=================  ===========================================================================

Webber & Park's Algorithm 2 (inference from fully judged common topics) is
:class:`pbtools.corrections.webber_topics.WebberCommonTopics`. All of these are re-exported by
:mod:`pbtools.corrections`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from pbtools.corrections.core import estimate, resolve
from pbtools.corrections.rerank import _sorted_runs
from pbtools.frames import as_qrels, encode

__all__ = ["correct", "TrueScore", "ReducedPool", "Condensed", "Lipani", "WebberOnRuns"]


def correct(
    qrels: pd.DataFrame,
    pooled_runs: pd.DataFrame,
    new_run: pd.DataFrame,
    orgs: pd.DataFrame | None = None,
    measures: Sequence[str] = ("P@10",),
    leave_out: str | None = None,
    estimators: Iterable[str] = ("reduced", "webber", "lipani"),
    protocol: str | None = None,
    depth: int | None = None,
    **choices,
) -> pd.DataFrame:
    """Correct the score of one or more new runs for pool bias (the CLI's entry point).

    ``qrels``: qrels; ``pooled_runs``: the runs that built the pool (run columns); ``new_run``:
    the run(s) to score (run columns); ``orgs``: ``name``, ``org`` (needed for
    ``leave_out="org"``). ``depth``: the pool depth d (default: inferred with
    :func:`pbtools.pooling.inference.infer_pool`).

    ``leave_out=None``: the new runs are unpooled; R_p = all pooled runs, Q = ``qrels``.
    ``leave_out="run"``/``"org"``: a new run that is in the pool is first withdrawn — its run or
    organisation is removed from the pool (reduced qrels = re-pool without the unit) — and the
    ``true`` score (on the re-pooled qrels) is reported too; R_p follows the ``rp`` choice.

    Choices (``alpha``, ``tie``, ``indicator``, ``rp``, ``decimals``, ``replace``) default to the
    principled values; ``protocol="lipani2015"`` selects the paper's (``PRESETS``).
    Returns ``name``, ``measure``, ``estimator`` (``true``, ``reduced``, ``webber``, ``lipani``,
    ``condensed``), ``value`` + indicators (see :func:`estimate`).
    """
    from pbtools.pooling.reductions import leave_one_out, repool

    opts = resolve(protocol, **choices)
    estimators = list(estimators)
    S = _sorted_runs(pooled_runs)
    new = _sorted_runs(new_run).copy(deep=False)
    new["name"] = encode(new["name"].astype(str))
    if depth is None:
        from pbtools.pooling.inference import infer_pool

        depth = infer_pool(S, qrels, policy=str(opts.get("pool_policy", "lipani2015"))).depth
    s_names = list(pd.unique(S["name"].astype(str)))
    n_names = list(pd.unique(new["name"].astype(str)))
    extra = []
    if leave_out is None:
        rp = pd.DataFrame(
            [(u, q) for u in n_names for q in s_names if q != u], columns=["unpooled", "name"]
        )
        res = estimate(
            S,
            new,
            qrels,
            rp_pairs=rp,
            depth=depth,
            measures=measures,
            estimators=[e for e in estimators if e != "true"],
            alpha=float(opts["alpha"]),
            tie=str(opts["tie"]),
            indicator=str(opts["indicator"]),
            decimals=opts["decimals"],
            replace=bool(opts["replace"]),
        )
        return res
    if leave_out not in ("run", "org"):
        raise ValueError(f"leave_out must be None, 'run' or 'org', got {leave_out!r}")
    if leave_out == "org" and orgs is None:
        raise ValueError("leave_out='org' needs orgs (name, org)")
    org_of = (
        {}
        if orgs is None
        else dict(zip(orgs["name"].astype(str), orgs["org"].astype(str), strict=True))
    )
    unit = {n: (org_of.get(n, n) if leave_out == "org" else n) for n in set(s_names + n_names)}
    reduced = leave_one_out(
        qrels,
        S,
        depth,
        by=leave_out,
        orgs=orgs if leave_out == "org" else None,
        units=sorted({unit[n] for n in n_names}),
        repool=True,
    )
    new["left_out"] = encode(new["name"].astype(str).map(unit))
    if opts["rp"] == "run":
        rp = [(u, q) for u in n_names for q in s_names if q != u]
    else:
        rp = [(u, q) for u in n_names for q in s_names if unit[q] != unit[u]]
    rp = pd.DataFrame(rp, columns=["unpooled", "name"])
    res = estimate(
        S,
        new,
        reduced,
        rp_pairs=rp,
        depth=depth,
        measures=measures,
        estimators=[e for e in estimators if e != "true"],
        alpha=float(opts["alpha"]),
        tie=str(opts["tie"]),
        indicator=str(opts["indicator"]),
        decimals=opts["decimals"],
        replace=bool(opts["replace"]),
    )
    if "true" in estimators:
        truth = repool(qrels, S, depth)
        t = estimate(
            S,
            new.drop(columns="left_out"),
            truth,
            measures=measures,
            estimators=("reduced",),
            decimals=opts["decimals"],
            rp_pairs=pd.DataFrame(columns=["unpooled", "name"]),
        )
        t["estimator"] = "true"
        extra.append(t)
    return pd.concat([*extra, res], ignore_index=True)


class _Base:
    """fit(qrels, runs, orgs) stores the pool; score(run_or_runs) returns the tidy frame."""

    _estimator = ""

    def __init__(
        self,
        measures: Sequence[str] = ("P@10",),
        protocol: str | None = None,
        depth: int | None = None,
    ):
        self.measures = measures
        self.protocol = protocol
        self.depth = depth

    def get_params(self, deep: bool = True) -> dict[str, object]:
        """The constructor parameters (scikit-learn protocol)."""
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names}

    def _choices(self) -> dict[str, object]:
        return {}

    def fit(self, qrels: pd.DataFrame, runs: pd.DataFrame, orgs: pd.DataFrame | None = None):
        """Remember the qrels, the pooled runs and the run → organisation map; infer d."""
        self.qrels_, self.runs_, self.orgs_ = as_qrels(qrels), _sorted_runs(runs), orgs
        if self.depth is None:
            from pbtools.pooling.inference import infer_pool

            self.depth_ = infer_pool(runs, qrels).depth
        else:
            self.depth_ = int(self.depth)
        return self

    def score(self, run_or_runs: pd.DataFrame, leave_out: str | None = None) -> pd.DataFrame:
        """Score unpooled run(s) (run columns); ``leave_out`` as in :func:`correct`."""
        if not hasattr(self, "qrels_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit() first")
        est = (
            ("reduced",) if self._estimator == "true" and leave_out is None else (self._estimator,)
        )
        res = correct(
            self.qrels_,
            self.runs_,
            run_or_runs,
            orgs=self.orgs_,
            measures=self.measures,
            leave_out=leave_out,
            estimators=est,
            protocol=self.protocol,
            depth=self.depth_,
            **self._choices(),
        )
        if self._estimator == "true" and leave_out is None:
            res["estimator"] = "true"
        return res.reset_index(drop=True)


class TrueScore(_Base):
    """The run's score with its unit pooled: on the re-pooled qrels (PROTOCOL item 14)."""

    _estimator = "true"

    def score(self, run_or_runs: pd.DataFrame, leave_out: str | None = None) -> pd.DataFrame:
        """P@n (or RBP@n) of each run on ``repool(qrels, pooled runs, d)``: the score it gets
        while its unit is in the pool. ``leave_out`` is accepted for the common interface and
        ignored (the truth never leaves anything out). Columns as :func:`estimate`'s."""
        from pbtools.pooling.reductions import repool

        if not hasattr(self, "qrels_"):
            raise RuntimeError("TrueScore is not fitted; call fit() first")
        truth = repool(self.qrels_, self.runs_, self.depth_)
        res = estimate(
            self.runs_.iloc[:0],
            _sorted_runs(run_or_runs),
            truth,
            measures=self.measures,
            estimators=("reduced",),
            decimals=resolve(self.protocol)["decimals"],
            rp_pairs=pd.DataFrame(columns=["unpooled", "name"]),
        )
        res["estimator"] = "true"
        return res


class ReducedPool(_Base):
    """P@n on the (reduced) qrels, unjudged documents counted non-relevant."""

    _estimator = "reduced"


class Condensed(_Base):
    """The condensed-list score (unjudged documents removed; Sakai 2008) — upward biased."""

    _estimator = "condensed"


class Lipani(_Base):
    """Lipani et al. 2015 Algorithm 1: s + k̄·max(Δk, 0) when the indicator fires.

    ``alpha`` (merge weight, paper: 1), ``indicator`` (``"lambda"``, ``"dP"``, ``"dAntiP"``,
    ``"always"``), ``tie`` (``"exclusive_first"`` default / ``"lipani2015"``), ``rp``
    (``"org"`` default / ``"run"``), ``decimals`` (None / 4); ``protocol`` fills unset ones.
    """

    _estimator = "lipani"

    def __init__(
        self,
        alpha: float = 1.0,
        indicator: str = "lambda",
        measures: Sequence[str] = ("P@10",),
        tie: str | None = None,
        rp: str | None = None,
        decimals: int | None = None,
        protocol: str | None = None,
        depth: int | None = None,
    ):
        super().__init__(measures, protocol, depth)
        self.alpha, self.indicator, self.tie, self.rp, self.decimals = (
            alpha,
            indicator,
            tie,
            rp,
            decimals,
        )

    def _choices(self):
        return {
            "alpha": self.alpha,
            "indicator": self.indicator,
            "tie": self.tie,
            "rp": self.rp,
            "decimals": self.decimals,
        }


class WebberOnRuns(_Base):
    """Webber & Park 2009 Algorithm 1 (inference from pooled systems), P@n and RBP(p=…)@n.

    ``replace=True`` (default): the new run replaces the withdrawn pooled run in the inner pool
    (their refinement); ``replace=False`` with ``rp="run"`` and ``decimals=4`` is the reading
    compared in Lipani et al. 2015 (PROTOCOL item 13, ``protocol="lipani2015"``).
    """

    _estimator = "webber"

    def __init__(
        self,
        replace: bool | None = None,
        measures: Sequence[str] = ("P@10",),
        rp: str | None = None,
        decimals: int | None = None,
        protocol: str | None = None,
        depth: int | None = None,
    ):
        super().__init__(measures, protocol, depth)
        self.replace, self.rp, self.decimals = replace, rp, decimals

    def _choices(self):
        return {"replace": self.replace, "rp": self.rp, "decimals": self.decimals}
