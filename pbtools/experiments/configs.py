"""The options of :func:`pbtools.experiments.analyze`, and where its work runs.

Three frozen, documented option objects group what an analysis is asked:

* :class:`Reading` — how the collection's files are read (``lenient``, ``float32``, ``run_id``,
  ``desc``), the options of :func:`pbtools.io.read_collection`;
* :class:`Design` — the experiment (Lipani et al. 2015 §5): the leave-out units, the run sets,
  the estimators, the protocol preset, the pool, the topics and the statistics' choices;
* :class:`Execution` — where it runs (``jobs``, ``dask``, ``progress``). The tables never
  depend on it.

:class:`Execution` is also **the one scheduler**: :meth:`Execution.plan` decides threads of
this process, worker processes or a Dask cluster, and how many, and :meth:`Execution.limits`
caps this process's threads to the cores granted. :func:`pbtools.experiments.analyze`,
:func:`pbtools.correct` and :func:`pbtools.reproduce` run under it. :func:`run_configs` runs
an analysis' leave-one-out configurations as a plan says: in one call on this process's threads
(the configurations share the encoding and the merge), or as disjoint groups on worker
processes or a Dask cluster (:func:`pbtools.grid.run_grid`).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pbtools.engine.parallel import MAX_THREADS
from pbtools.errors import InputError
from pbtools.threads import cores_for, limited_threads, max_threads

__all__ = [
    "CORES_PER_PROCESS",
    "Design",
    "Execution",
    "MIN_ROWS_PER_JOB",
    "Plan",
    "Reading",
    "config_group",
    "config_tables",
    "options_from",
    "run_configs",
]

#: below this many run rows per worker process, an analysis uses no worker processes: each
#: worker redoes the encoding and the merge r_p ∘ r_u, and a pool of two processes costs
#: 0.10-0.17 s to start; on the bundled sample (24,000 rows) and a 180,000-row track the split
#: saved only 0.2 CPU seconds (``benchmarks/scaling.py --jobs-compare ...``)
MIN_ROWS_PER_JOB = 100_000

#: the cores one process keeps busy: its leave-out blocks and Lipani's merges run on up to this
#: many threads (:data:`pbtools.engine.parallel.MAX_THREADS`). Worker processes are used
#: only for cores beyond it — each worker redoes the encoding and the merge (1.4-1.5× the CPU
#: of one process), and on 2 idle cores two single-threaded workers took 1.02-1.07× the wall
#: time of one process on two threads (``benchmarks/scaling.py --jobs-compare trec2 synth127``;
#: more than 2 cores could not be measured on the development machines).
CORES_PER_PROCESS = MAX_THREADS

LEAVE_OUT = ("org", "run")
RUN_SETS = ("all", "top75")


def _words(value, allowed: Sequence[str], what: str) -> tuple[str, ...]:
    """``value`` (one word or several) as a tuple of ``allowed`` words, none repeated."""
    items = (value,) if isinstance(value, str) else tuple(value)
    if not items:
        raise InputError(f"{what} needs at least one of {', '.join(allowed)}")
    for v in items:
        if v not in allowed:
            raise InputError(f"{what} must be one of {', '.join(allowed)}, got {v!r}")
    if len(set(items)) < len(items):
        raise InputError(f"{what} lists a value twice: {list(items)}")
    return items


@dataclass(frozen=True)
class Reading:
    """How a collection's files are read (:func:`pbtools.io.read_collection`'s options).

    Parameters
    ----------
    lenient : bool
        Repair what can be repaired (each repair a warning and a row of ``repairs``) instead of
        refusing the file.
    float32 : bool
        Round scores to float32 first, as the reference code's Java floats did.
    run_id : {"tag", "file"}
        Name runs by their column-6 tag or by their file name.
    desc : path, optional
        The desc.xml mapping run tags to organizations (default: the track's own).

    Under a protocol preset (:class:`Design` ``protocol``) the preset reads the track as its
    reference code did, whatever these say; the analysis' ``params`` record the reading done.

    Examples
    --------
    >>> Reading(lenient=True).kwargs()
    {'lenient': True, 'float32': False, 'run_id': 'tag'}
    >>> Reading(run_id="name")
    Traceback (most recent call last):
    ...
    pbtools.errors.InputError: run_id must be one of tag, file, got 'name'
    """

    lenient: bool = False
    float32: bool = False
    run_id: str = "tag"
    desc: str | Path | None = None

    def __post_init__(self):
        _words(self.run_id, ("tag", "file"), "run_id")

    def kwargs(self) -> dict[str, Any]:
        """The keywords of :func:`pbtools.io.read_runs` (``desc`` is the collection's)."""
        return {"lenient": self.lenient, "float32": self.float32, "run_id": self.run_id}


@dataclass(frozen=True)
class Design:
    """The design of a bias analysis (Lipani et al. 2015 §5; Webber & Park 2009 §3.1).

    Parameters
    ----------
    leave_out : sequence of {"org", "run"}
        The units withdrawn from the pool in turn (default both).
    run_sets : sequence of {"all", "top75"}
        All pooled runs, and/or the best ``fraction`` of them per measure with the experiment
        redone inside them (PROTOCOL item 9).
    estimators : sequence of str, optional
        Names of :data:`pbtools.corrections.registry.ESTIMATORS` (default: the registry's
        defaults for ``"analyze"`` when the analysis runs).
    protocol : str, optional
        ``"lipani2015"``: every choice of the paper (:data:`pbtools.presets.PRESETS`),
        the reading included.
    fraction : float
        The share of the pooled runs kept by ``"top75"`` (0 < fraction ≤ 1).
    policy : str
        The pool-inference rule (:mod:`pbtools.pooling.inference`).
    pooled, depth : optional
        The pooled runs and the contribution depth, when the pool's builder is known (both, or
        ``depth`` alone to fix the depth of the inferred pool).
    topics : str, optional
        The topics a run is averaged over (:mod:`pbtools.measures.topics`; ``"all"`` is
        trec_eval's ``-c``); default: the protocol's.
    alpha : float
        The significance level of SRE* (0 < alpha < 1).
    sre_test : str or path
        SRE*'s test (:data:`pbtools.stats.SRE_TESTS`: ``"hsd"``, ``"t"``), or the reference
        tool's ``pValues.<metric>.csv`` files (a directory, or one measure's file).
    top_ties : str
        How a tie of scores at the top-``fraction`` cut is broken
        (:data:`pbtools.pooling.TIE_RULES`).

    Examples
    --------
    >>> Design(leave_out=["org"]).leave_out
    ('org',)
    >>> Design(pooled=["r1"])
    Traceback (most recent call last):
    ...
    pbtools.errors.InputError: pooled needs depth: the pooled runs and the contribution depth \
give the pool together (depth alone fixes the inferred pool's depth)
    """

    leave_out: Sequence[str] = LEAVE_OUT
    run_sets: Sequence[str] = RUN_SETS
    estimators: Sequence[str] | None = None
    protocol: str | None = None
    fraction: float = 0.75
    policy: str = "paper"
    pooled: Sequence[str] | None = None
    depth: int | None = None
    topics: str | None = None
    alpha: float = 0.05
    sre_test: str | Path = "hsd"
    top_ties: str = "order"

    def __post_init__(self):
        from pbtools.pooling.topruns import TIE_RULES

        put = object.__setattr__  # frozen: normalised once, here
        put(self, "leave_out", _words(self.leave_out, LEAVE_OUT, "leave_out"))
        put(self, "run_sets", _words(self.run_sets, RUN_SETS, "run_sets"))
        if self.estimators is not None:
            est = (self.estimators,) if isinstance(self.estimators, str) else self.estimators
            put(self, "estimators", tuple(map(str, est)))
        if self.pooled is not None:
            if self.depth is None:
                raise InputError(
                    "pooled needs depth: the pooled runs and the contribution depth give the "
                    "pool together (depth alone fixes the inferred pool's depth)"
                )
            put(self, "pooled", tuple(sorted(map(str, self.pooled))))
        if not 0 < self.fraction <= 1:
            raise InputError(f"fraction must be in (0, 1], got {self.fraction!r}")
        if not 0 < self.alpha < 1:
            raise InputError(f"alpha must be in (0, 1), got {self.alpha!r}")
        _words(self.top_ties, tuple(TIE_RULES), "top_ties")
        if self.depth is not None and (isinstance(self.depth, bool) or int(self.depth) < 1):
            raise InputError(f"depth must be an integer >= 1, got {self.depth!r}")


class Plan(NamedTuple):
    """How a batch of tasks runs: ``processes`` (1: this process), ``threads`` per process and
    ``note`` (why fewer cores than asked, or None)."""

    processes: int
    threads: int
    note: str | None


@dataclass(frozen=True)
class Execution:
    """Where work runs — the one scheduling decision of ``analyze``, ``correct`` and
    ``reproduce``. The results never depend on it.

    Parameters
    ----------
    jobs : int, optional
        The cores to use (None or 0: every usable core, :func:`pbtools.threads.cores_for`;
        1: one thread, the least memory). A request for more cores than are usable is granted
        what is usable, with a note.
    dask : str or distributed.Client, optional
        Run the tasks on a Dask cluster: a scheduler address (``tcp://host:8786``), a client,
        or ``"local"`` (a ``LocalCluster`` of this machine's cores).
    progress : bool, optional
        Progress bars on standard error (None: when it is a terminal).

    Examples
    --------
    >>> Execution(jobs=1).plan(n_tasks=4, rows=10_000_000)
    Plan(processes=1, threads=1, note=None)
    >>> Execution(jobs=2, dask="tcp://scheduler:8786").plan(4, 10)
    Plan(processes=2, threads=1, note=None)
    >>> Execution(jobs=-1)
    Traceback (most recent call last):
    ...
    pbtools.errors.InputError: jobs must be an integer >= 1 (0 or None: every core), got -1
    """

    jobs: int | None = None
    dask: Any = None
    progress: bool | None = None

    def __post_init__(self):
        cores_for(self.jobs)  # a negative or fractional count, or a bad PBTOOLS_THREADS
        if isinstance(self.dask, str) and not self.dask.strip():
            raise InputError("dask needs a scheduler address (tcp://host:8786) or 'local'")

    @property
    def cores(self) -> int:
        """The threads this process may use: the cores granted (every usable one with Dask,
        whose workers are other processes)."""
        return cores_for(self.jobs)[0] if self.dask is None else max_threads()

    @contextlib.contextmanager
    def limits(self) -> Iterator[None]:
        """This process's threads capped at :attr:`cores` for the ``with`` block
        (:func:`pbtools.threads.limited_threads`: the parse, the leave-out blocks, the
        merges)."""
        with limited_threads(self.cores):
            yield

    def plan(self, n_tasks: int, rows: int = 0) -> Plan:
        """How to run ``n_tasks`` independent tasks over ``rows`` run rows.

        Without Dask: one process — this one, on the granted cores as threads — up to
        :data:`CORES_PER_PROCESS` cores; beyond it, one worker process per
        :data:`CORES_PER_PROCESS` cores (at most one per task and one per
        :data:`MIN_ROWS_PER_JOB` rows), the cores shared out as threads. A Dask cluster gets
        one single-threaded group per task, or ``jobs`` groups if ``jobs`` > 1
        (``"local"``: one per usable core).
        """
        from pbtools.grid import plan_jobs

        jobs, dask = self.jobs, self.dask
        if dask == "local":  # a LocalCluster of this machine's cores: one group per worker
            return Plan(plan_jobs(jobs if jobs and jobs > 1 else 0, n_tasks)[0], 1, None)
        if dask is not None:
            return Plan(min(jobs, n_tasks) if jobs and jobs > 1 else n_tasks, 1, None)
        cores, note = cores_for(jobs)
        per = max(CORES_PER_PROCESS, 1)
        processes = min(-(-cores // per), n_tasks, rows // max(MIN_ROWS_PER_JOB, 1))
        if processes <= 1:
            return Plan(1, cores, note)
        return Plan(processes, cores // processes, note)


#: the option objects of :func:`pbtools.experiments.analyze` and their fields' names
OPTIONS = {"reading": Reading, "design": Design, "execution": Execution}


def options_from(given: dict, keywords: dict) -> dict:
    """``{"reading": Reading, "design": Design, "execution": Execution}`` from the objects
    ``given`` (None: the defaults) and the loose ``keywords`` (any field of one of them,
    ``analyze(leave_out=["org"])``). A keyword of an object also given, or of none, is
    refused.

    >>> options_from({}, {"leave_out": ["org"], "jobs": 1})["design"].leave_out
    ('org',)
    >>> options_from({"design": Design()}, {"leave_out": ["org"]})
    Traceback (most recent call last):
    ...
    pbtools.errors.InputError: leave_out is a field of design=: set it there, not as a keyword too
    """
    out = {}
    left = dict(keywords)
    for key, cls in OPTIONS.items():
        fields = {f.name for f in dataclasses.fields(cls)}
        mine = {k: left.pop(k) for k in list(left) if k in fields}
        obj = given.get(key)
        if obj is None:
            out[key] = cls(**mine)
            continue
        if not isinstance(obj, cls):
            raise InputError(f"{key}= must be a {cls.__name__}, not {type(obj).__name__}")
        if mine:
            raise InputError(
                f"{', '.join(sorted(mine))} {'is a field' if len(mine) == 1 else 'are fields'} "
                f"of {key}=: set {'it' if len(mine) == 1 else 'them'} there, not as a keyword too"
            )
        out[key] = obj
    if left:
        raise TypeError(f"analyze() got an unexpected keyword argument {sorted(left)[0]!r}")
    return out


def config_tables(
    configs,
    frames,
    measures,
    estimators,
    protocol,
    pooled,
    depth,
    fraction,
    topics=None,
    progress=False,
    top_ties="order",
):
    """Several leave-one-out configurations in one call: ``(scores, truth)`` per config, the
    scores keyed by the configuration's ``leave_out``. ``measures``: :class:`Measure` objects
    (:func:`pbtools.measures.parse_all`, done once by the caller)."""
    from pbtools.experiments.leaveout import experiment_tables

    results = experiment_tables(
        frames,
        configs,
        measures=measures,
        estimators=estimators,
        protocol=protocol,
        pooled=pooled,
        depth=depth,
        fraction=fraction,
        topics=topics,
        progress=progress,
        top_ties=top_ties,
    )
    for cfg, (res, _truth) in zip(configs, results, strict=True):
        res.insert(0, "leave_out", cfg["leave_out"])
    return results


def run_configs(configs, shared: dict, execution: Execution, rows: int = 0):
    """``(scores, truth)`` per configuration, in order, as ``execution`` plans it
    (:meth:`Execution.plan` over ``rows`` run rows): in one call on this process's threads
    (the configurations share the encoding and the merge), or as disjoint groups on worker
    processes or Dask. ``shared``: the other arguments of :func:`config_tables`."""
    from pbtools.grid import run_grid
    from pbtools.progress import write

    n, threads, note = execution.plan(len(configs), rows)
    if note is not None:
        k = threads * n
        write(f"analyze: --jobs {execution.jobs}: using {k} core{'s' if k != 1 else ''}: {note}")
    if n == 1 and execution.dask is None:  # on the threads :func:`analyze` granted
        return config_tables(configs, **shared, progress=execution.progress)
    # heaviest first (top75 redoes the experiment per measure), dealt round-robin
    order = sorted(range(len(configs)), key=lambda i: configs[i]["runs"] != "top75")
    groups = [order[g::n] for g in range(n)]
    parts = run_grid(
        config_group,
        [{"group": [configs[i] for i in g], "threads": threads} for g in groups],
        jobs=n,
        dask=execution.dask,
        progress=execution.progress,
        desc="leave-one-out",
        shared=shared,
    )
    results: list = [None] * len(configs)
    for g, part in zip(groups, parts, strict=True):
        for i, r in zip(g, part, strict=True):
            results[i] = r
    return results


def config_group(group, threads=1, **shared):
    """Several leave-one-out configurations in one worker (a grid task for processes or Dask),
    on ``threads`` threads."""
    with limited_threads(threads):
        return config_tables(group, **shared)
