"""The estimator protocol (scikit-learn's) shared by every correction, and their registry.

An estimator is a class with its parameters in ``__init__`` (stored under their own names, no
work there), ``fit(pooled_runs, qrels, orgs)`` (the pool's work, once: the frames checked, put
in trec order and dictionary-encoded, the depth inferred, the pool encoded:
:class:`~pbtools.engine.build.FittedPool`; fitted state ends in ``_``), ``predict(runs,
measures)`` (the runs added to that encoding, the per-run estimates: the tidy result frame;
``score``, its old name, is a deprecated alias — scikit-learn's ``score`` returns one number),
``get_params`` /
``set_params`` — and the algorithm itself in ``estimate(problem, measures)``, which works on an
encoded :class:`~pbtools.engine.problem.Problem` (a leave-out experiment calls it directly,
with many runs and relevance sets at once).

Each class describes itself, and every place that shows an estimator reads the class: its
:attr:`~Estimator.name` (the ``estimator`` column and the registry key), :attr:`~Estimator.label`
(legends and sentences), :attr:`~Estimator.colour` and :attr:`~Estimator.marker` (every figure
and the report's legend), :attr:`~Estimator.description` (the one-line help of
``pbtools correct --estimators``, ``analyze`` and the reports' legends),
:attr:`~Estimator.supports` (measure bases, None for every measure) and
:attr:`~Estimator.default_for` (the verbs whose default estimators include it). A new estimator
is one module with a subclass and one line in :data:`pbtools.corrections.registry.ESTIMATORS`
(``docs/extending.md`` shows one).

Result columns (every estimator): ``name``, ``measure``, ``estimator``, ``value`` and, where
they apply, ``P``, ``AntiP``, ``k`` (the run's own P@n, P̄@n, k̄@n on its qrels), ``dP``,
``dAntiP``, ``dk`` (ΔP, ΔP̄, Δk), ``lam`` (λ), ``fired``, ``adjustment`` (value − reduced score)
and ``n_pooled`` (|R_p|); NaN where not applicable.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence

import pandas as pd

from pbtools.engine.build import FittedPool
from pbtools.engine.problem import Problem
from pbtools.errors import InputError
from pbtools.frames import as_qrels, ranked
from pbtools.measures.names import Measure, measure_list, parse_all
from pbtools.presets import resolve
from pbtools.validation import validates

__all__ = ["Estimator", "RESULT_COLUMNS", "DEFAULT_CONTEXTS", "tidy"]

#: the verbs an estimator can be a default of (:attr:`Estimator.default_for`): ``"analyze"``
#: (:func:`pbtools.analyze`, ``pbtools analyze`` and ``report``), ``"correct"``
#: (:func:`pbtools.correct`, :func:`pbtools.corrections.correct`) and ``"cli"`` (``pbtools
#: correct``, which also shows the baselines)
DEFAULT_CONTEXTS = ("analyze", "correct", "cli")

#: the columns of every estimator's result, in order
RESULT_COLUMNS = (
    "name",
    "measure",
    "estimator",
    "value",
    "P",
    "AntiP",
    "k",
    "dP",
    "dAntiP",
    "dk",
    "lam",
    "fired",
    "adjustment",
    "n_pooled",
)


class Estimator:
    """Base class: the scikit-learn protocol around :meth:`estimate` (see module docstring).

    Parameters
    ----------
    measures : sequence of str
        Default measures of :meth:`predict` (any name of :func:`pbtools.measures.parse`).
    decimals : int, optional
        Half-up rounding of every run-level score before it is combined (PROTOCOL item 10).
    topics : {"judged", "all", "answered"}, optional
        Topic averaging (:mod:`pbtools.measures.topics`).
    protocol : str, optional
        A preset of :data:`pbtools.corrections.PRESETS` filling every choice left unset.
    depth : int, optional
        The pool depth d (default: inferred by :meth:`fit` with
        :func:`pbtools.pooling.infer_pool`).
    """

    #: the value of the ``estimator`` column (and the registry key)
    name: str = ""
    #: its short name in legends and sentences (default: :attr:`name`)
    label: str = ""
    #: its colour in every figure and legend (``#rrggbb``; default: one of a fixed extra palette)
    colour: str = ""
    #: its matplotlib marker in the figures
    marker: str = "o"
    #: one sentence: what its value is (CLI help, the text and HTML reports' legends)
    description: str = ""
    #: the verbs whose default estimators include it (:data:`DEFAULT_CONTEXTS`)
    default_for: frozenset[str] = frozenset()
    #: it works on the encoded problem (:meth:`estimate`); False: it needs other inputs (its own
    #: :meth:`predict`) and :func:`pbtools.corrections.correct` refuses it
    on_problem: bool = True
    #: measure bases the estimator corrects; None: every measure pbtools computes
    supports: frozenset[str] | None = None
    #: what the estimator corrects, in words, said when it skips a measure
    #: (:func:`pbtools.corrections.registry.skipped`); default: the bases of :attr:`supports`
    scope: str = ""
    #: the protocol choices (:mod:`pbtools.presets`) this estimator reads
    choice_names: tuple[str, ...] = ("decimals", "topics")

    def __init__(
        self,
        measures: Sequence[str] = ("P@10",),
        decimals: int | None = None,
        topics: str | None = None,
        protocol: str | None = None,
        depth: int | None = None,
    ):
        self.measures = measures
        self.decimals = decimals
        self.topics = topics
        self.protocol = protocol
        self.depth = depth

    # ------------------------------------------------------------------ scikit-learn protocol
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict[str, object]:
        """The constructor parameters (scikit-learn protocol)."""
        return {n: getattr(self, n) for n in self._param_names()}

    def set_params(self, **params) -> Estimator:
        """Set constructor parameters; unknown names raise ``ValueError``."""
        known = set(self._param_names())
        bad = sorted(set(params) - known)
        if bad:
            raise InputError(f"{type(self).__name__} has no parameter(s) {bad}; it has {known}")
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # ------------------------------------------------------------------ choices and measures
    def choices(self) -> dict[str, object]:
        """The effective choices: the preset, overridden by parameters set on the instance."""
        own = {c: getattr(self, c, None) for c in self.choice_names}
        return resolve(self.protocol, **own)

    @classmethod
    def supported(cls, measures) -> list[Measure]:
        """The measures of ``measures`` (parsed: :func:`pbtools.measures.parse_all`) this
        estimator can correct."""
        ms = measure_list(measures, f"{cls.__name__}.supported")
        return [m for m in ms if cls.accepts(m)]

    @classmethod
    def accepts(cls, measure: Measure) -> bool:
        """Whether the estimator corrects ``measure``."""
        return cls.supports is None or measure.base in cls.supports

    def _check(self, measures) -> list[Measure]:
        ms = parse_all(measures)
        bad = [str(m) for m in ms if not self.accepts(m)]
        if bad:
            raise InputError(
                f"the {self.name} estimator does not support {bad}; it supports "
                f"{sorted(self.supports) if self.supports else 'every measure'}"
            )
        return ms

    # ------------------------------------------------------------------ fit / predict
    @validates(pooled_runs="run", qrels="qrels", orgs="orgs")
    def fit(
        self, pooled_runs: pd.DataFrame, qrels: pd.DataFrame, orgs=None, *, lenient: bool = False
    ) -> Estimator:
        """The pool's work, once: the pooled runs, the qrels Q and the run → organisation map
        checked, ranked and encoded; d inferred.

        The frames are checked by :mod:`pbtools.validation` (``lenient=True``: repeated rows
        dropped with a warning instead of refused), the pooled runs put in trec order with
        their ids dictionary-encoded (:func:`pbtools.frames.ranked`), the qrels encoded
        (:func:`pbtools.frames.as_qrels`), the depth inferred
        (:func:`pbtools.pooling.infer_pool`) unless given, and the pool encoded once
        (:class:`~pbtools.engine.build.FittedPool`): the pooled runs' dense layout with the
        qrels' documents, Q's labels, the truth (the re-pool at d) and its relevance sets;
        who pooled what by leave-out unit is added the first time a :meth:`predict` asks for
        it. :meth:`predict` adds only the runs to score to that layout and reuses the rest,
        so predicting runs one call at a time gives the estimates of one call with them all.
        Returns ``self``; fitted state: ``qrels_``, ``runs_`` (trec order), ``orgs_``,
        ``depth_``, ``pool_``.
        """
        self.qrels_ = as_qrels(qrels)
        self.runs_ = ranked(pooled_runs)
        self.orgs_ = orgs
        if self.depth is None:
            from pbtools.pooling.inference import infer_pool

            policy = str(self.choices()["pool_policy"])
            self.depth_ = int(infer_pool(self.runs_, self.qrels_, policy=policy).depth)
        else:
            self.depth_ = int(self.depth)
        self.pool_ = FittedPool(self.runs_, self.qrels_, depth=self.depth_, orgs=orgs)
        return self

    def problem(self, runs: pd.DataFrame, leave_out: str | None = None) -> Problem:
        """The encoded problem of scoring ``runs`` against the fitted pool (its encoding
        reused: :meth:`~pbtools.engine.build.FittedPool.problem`)."""
        if not hasattr(self, "pool_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit() first")
        opts = self.choices()
        return self.pool_.problem(
            runs,
            leave_out=leave_out,
            rp=str(opts.get("rp", "org")),
            topics=str(opts["topics"]),
            decimals=opts["decimals"],
        )

    @validates(runs="run")
    def predict(
        self,
        runs: pd.DataFrame,
        measures=None,
        leave_out: str | None = None,
        *,
        lenient: bool = False,
    ) -> pd.DataFrame:
        """The estimates of the run(s) ``runs`` against the fitted pool (one row per run and
        measure).

        ``measures`` default to the constructor's; ``leave_out="run"``/``"org"`` first
        withdraws each run's unit from the pool (the runs are then pooled runs scored as if
        they had not been); ``runs`` are checked as in :meth:`fit`. Returns the tidy frame of
        :data:`RESULT_COLUMNS`.
        """
        ms = self._check(self.measures if measures is None else measures)
        return tidy(self.estimate(self.problem(runs, leave_out), ms))

    def score(self, *args, **kwargs) -> pd.DataFrame:
        """Deprecated alias of :meth:`predict` (scikit-learn's ``score`` returns one number;
        the per-run estimates are ``predict``'s)."""
        warnings.warn(
            f"{type(self).__name__}.score is deprecated: use {type(self).__name__}.predict "
            "(the per-run estimates; scikit-learn's score returns one number)",
            DeprecationWarning,
            stacklevel=2,
        )
        if "new_runs" in kwargs:  # the old name of predict's first parameter
            kwargs["runs"] = kwargs.pop("new_runs")
        return self.predict(*args, **kwargs)

    def estimate(self, problem: Problem, measures) -> pd.DataFrame:
        """The algorithm on an encoded problem: one row per run to score and measure (the
        frame of :meth:`estimate_columns`; an estimator implements one of the two)."""
        if type(self).estimate_columns is Estimator.estimate_columns:  # pragma: no cover
            raise NotImplementedError(f"{type(self).__name__} implements no estimate")
        return pd.DataFrame(self.estimate_columns(problem, measures))

    def estimate_columns(self, problem: Problem, measures) -> dict:
        """The columns of :meth:`estimate`'s tidy frame (:data:`RESULT_COLUMNS`, in order;
        arrays, a scalar for a constant column), before a frame is made: a leave-out
        experiment joins them over its chunks of runs into one frame per estimator
        (:func:`pbtools.experiments.chunked.estimate_in_chunks`). By default the columns of
        :meth:`estimate`'s frame."""
        if type(self).estimate is Estimator.estimate:  # pragma: no cover
            raise NotImplementedError(f"{type(self).__name__} implements no estimate")
        frame = tidy(self.estimate(problem, measures))
        return {c: frame[c].array for c in RESULT_COLUMNS}


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every column of :data:`RESULT_COLUMNS` (NaN where absent), in order."""
    if tuple(frame.columns) == RESULT_COLUMNS and frame.index.equals(pd.RangeIndex(len(frame))):
        return frame  # built tidy (``Problem.columns(..., order=RESULT_COLUMNS)``)
    # one reindex (absent columns: float64 NaN), the index renumbered 0..n-1
    out = frame.reindex(columns=list(RESULT_COLUMNS))
    if not out.index.equals(pd.RangeIndex(len(out))):
        out = out.reset_index(drop=True)
    return out
