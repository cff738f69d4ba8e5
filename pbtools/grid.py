"""Run a grid of independent, explicitly seeded tasks serially, on processes or on Dask.

An experiment grid (pool widths × repeats, conditions × measures, …) is a list of independent
tasks. :func:`run_grid` runs them and returns their results **in task order**, whatever the
executor, so a serial run, ``jobs=N`` processes and a Dask cluster give identical results:

* ``jobs=1`` (default): a plain loop in this process.
* ``jobs=N > 1``: a :class:`concurrent.futures.ProcessPoolExecutor` with N workers (``fork``
  start method where the platform has it, so functions defined in a script's ``__main__`` work).
* ``dask="tcp://host:8786"`` or a :class:`distributed.Client`: tasks are submitted to a Dask
  distributed cluster; ``dask="local"`` starts a :class:`distributed.LocalCluster` of ``jobs``
  single-threaded worker processes for the call. Dask is an optional extra
  (``pip install "dask[distributed]"``), imported only on this path; without it a clear
  :class:`ImportError` says how to install it.

:func:`plan_jobs` is the one rule for how many worker processes a grid can use (never more than
the usable cores nor the tasks), with the reason when it uses fewer than asked.

**Seeding.** Every task is seeded explicitly: with ``seed=S`` each task ``i`` gets the integer
``task_seeds(S, n)[i]`` (NumPy ``SeedSequence(S).spawn``), passed as the keyword ``seed`` unless
the task's own kwargs already name one. A task never draws from a global random state, so its
result depends only on its kwargs, not on which worker ran it or when.

**Shared data.** Large inputs common to all tasks (runs, qrels) go in ``shared``: they are
shipped once per worker (process initializer; Dask ``scatter(broadcast=True)``) instead of once
per task, and passed to every call as keyword arguments: ``fn(**shared, **kwargs)``.

**Progress.** ``progress=None`` (default) shows a tqdm bar when tqdm is installed and stderr is
a terminal; ``True`` forces it (if tqdm is installed), ``False`` turns it off
(:func:`pbtools.progress.progress_bar`, re-used here and by the leave-one-out experiments).

Tasks are ``(function, kwargs)`` pairs (see :func:`tasks_from`) or, more simply, one function
and a list of parameter dicts (:func:`run_grid` ``(fn, params)``; :func:`product` builds the
cartesian product of parameter axes).
"""

from __future__ import annotations

import inspect
import itertools
import multiprocessing
import os
import sys
import sysconfig
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pbtools.progress import progress_bar
from pbtools.threads import cores_for, limit_threads, limited_threads, usable_cores

__all__ = [
    "Task",
    "GridError",
    "product",
    "run_grid",
    "task_seeds",
    "tasks_from",
    "default_jobs",
    "plan_jobs",
    "import_distributed",
    "progress_bar",
]


@dataclass(frozen=True)
class Task:
    """One unit of work: ``fn(**shared, **kwargs)``. ``fn`` must be a picklable module-level
    function for ``jobs > 1`` and Dask (``__main__`` functions are fine: fork / cloudpickle)."""

    fn: Callable[..., Any]
    kwargs: Mapping[str, Any] = field(default_factory=dict)


class GridError(RuntimeError):
    """A task of the grid raised: names the task index and its kwargs; ``__cause__`` is the
    original exception."""


def default_jobs() -> int:
    """The number of usable cores (:func:`pbtools.threads.usable_cores`)."""
    return usable_cores()


def plan_jobs(jobs: int | None, n_tasks: int) -> tuple[int, str | None]:
    """How many worker processes ``jobs`` can use for ``n_tasks`` tasks, and why fewer, if fewer.

    ``jobs`` None or 0 means every usable core (:func:`default_jobs`). The plan never exceeds the
    usable cores (more processes than cores only add start-up and contention) nor the tasks.
    Returns ``(n, reason)``: ``reason`` is None when ``n`` is what was asked (or every core),
    else a short sentence saying why ``n`` is smaller.

    Examples
    --------
    >>> plan_jobs(1, 10)
    (1, None)
    >>> plan_jobs(4, 1)
    (1, 'only 1 task to run')
    """
    cores, note = cores_for(max(int(jobs or 0), 0), available=default_jobs())
    n = max(1, min(cores, n_tasks))
    if note is None and n == cores:  # what was asked (or every core)
        return n, None
    if n_tasks < cores or (note is not None and n_tasks <= cores):  # the tasks are the limit
        return n, f"only {n_tasks} task{'s' if n_tasks != 1 else ''} to run"
    return n, note


def product(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """Cartesian product of parameter axes as a list of dicts, first axis slowest.

    ``product(width=[2, 4], repeat=range(3))`` → ``[{"width": 2, "repeat": 0}, …]`` (6 dicts).
    """
    names = list(axes)
    return [
        dict(zip(names, values, strict=True))
        for values in itertools.product(*(list(v) for v in axes.values()))
    ]


def task_seeds(seed: int | None, n: int) -> list[int]:
    """``n`` independent 63-bit integer seeds derived from ``seed`` (``SeedSequence.spawn``).

    Deterministic in (seed, n) and prefix-stable: the first k seeds do not depend on n.
    ``seed=None`` draws fresh OS entropy (not reproducible; avoid in experiments).
    """
    children = np.random.SeedSequence(seed).spawn(n)
    return [
        int(
            c.generate_state(2, dtype=np.uint32).astype(np.uint64)
            @ np.array([1 << 31, 1], dtype=np.uint64)
        )
        for c in children
    ]


def tasks_from(
    fn: Callable[..., Any] | Sequence, params: Iterable[Mapping[str, Any]] | None = None
) -> list[Task]:
    """Normalise a grid to a list of :class:`Task`.

    Accepts ``(fn, [kwargs, …])`` — one function over parameter dicts — or a sequence of
    :class:`Task` / ``(fn, kwargs)`` pairs (then ``params`` must be None).
    """
    if callable(fn):
        if params is None:
            raise TypeError("run_grid(fn, params): params (a list of kwargs dicts) is required")
        return [Task(fn, dict(p)) for p in params]
    if params is not None:
        raise TypeError("params is only allowed with a function as first argument")
    out = []
    for i, t in enumerate(fn):
        if isinstance(t, Task):
            out.append(t)
        elif isinstance(t, (tuple, list)) and len(t) == 2 and callable(t[0]):
            out.append(Task(t[0], dict(t[1])))
        else:
            raise TypeError(f"task {i} is neither a Task nor a (function, kwargs) pair: {t!r}")
    return out


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    """True when ``fn`` takes a keyword ``name`` (or ``**kwargs``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False
    return any(
        p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()
    )


def _seeded(tasks: list[Task], seed: int | None) -> list[Task]:
    """Add an explicit ``seed`` kwarg to every task that takes one and has none."""
    if seed is None:
        return tasks
    seeds = task_seeds(seed, len(tasks))
    return [
        t
        if "seed" in t.kwargs or not _accepts(t.fn, "seed")
        else Task(t.fn, {**t.kwargs, "seed": s})
        for t, s in zip(tasks, seeds, strict=True)
    ]


# --------------------------------------------------------------------------------------------
# execution
# --------------------------------------------------------------------------------------------

_SHARED: dict[str, Any] = {}


def _init_worker(shared: Mapping[str, Any]) -> None:
    """Process initializer: keep the shared inputs in this worker's module state."""
    _SHARED.clear()
    _SHARED.update(shared)
    _limit_threads()


def _limit_threads() -> None:
    """One thread per worker process — pbtools' own pools (:func:`pbtools.threads.limit_threads`)
    and BLAS/OpenMP — so N workers do not oversubscribe N cores."""
    limit_threads(1)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(1)


def _call(
    fn: Callable[..., Any],
    kwargs: Mapping[str, Any],
    shared: Mapping[str, Any] | None,
) -> Any:
    return fn(**(_SHARED if shared is None else shared), **kwargs)


def _run_chunk(chunk: list[tuple[int, Task]]) -> list[tuple[int, Any]]:
    """Run a chunk of tasks in a worker process (shared inputs from the initializer)."""
    return [(i, _call(t.fn, t.kwargs, None)) for i, t in chunk]


def _dask_call(fn: Callable[..., Any], kwargs: Mapping[str, Any], **shared: Any) -> Any:
    with limited_threads(1):  # the tasks run in parallel already: one thread each
        return fn(**shared, **kwargs)


def _raise(i: int, task: Task, exc: BaseException) -> None:
    name = getattr(task.fn, "__qualname__", repr(task.fn))
    raise GridError(
        f"task {i} ({name}, kwargs={dict(task.kwargs)!r}) failed: {type(exc).__name__}: {exc}"
    ) from exc


def _serial(tasks, shared, bar):
    out = []
    for i, t in enumerate(tasks):
        try:
            out.append(_call(t.fn, t.kwargs, shared))
        except Exception as exc:  # noqa: BLE001 - re-raised with context
            _raise(i, t, exc)
        if bar is not None:
            bar.update(1)
    return out


def _mp_context(start_method: str | None):
    if start_method is None:
        start_method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    return multiprocessing.get_context(start_method)


def _processes(tasks, shared, jobs, chunksize, start_method, bar):
    n = len(tasks)
    if chunksize is None:
        chunksize = max(1, n // (jobs * 4))
    indexed = list(enumerate(tasks))
    chunks = [indexed[k : k + chunksize] for k in range(0, n, chunksize)]
    out: list[Any] = [None] * n
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(chunks)),
        mp_context=_mp_context(start_method),
        initializer=_init_worker,
        initargs=(dict(shared),),
    ) as ex:
        futures = {ex.submit(_run_chunk, c): c for c in chunks}
        for fut in as_completed(futures):
            try:
                for i, r in fut.result():
                    out[i] = r
            except Exception as exc:  # noqa: BLE001 - re-raised with context
                for f in futures:
                    f.cancel()
                i, t = futures[fut][0]
                _raise(i, t, exc)
            if bar is not None:
                bar.update(len(futures[fut]))
    return out


def import_distributed():
    """The ``distributed`` module, or an :class:`ImportError` saying how to install it."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            "running a grid on Dask needs the optional dependency dask[distributed]: "
            'pip install "dask[distributed]"  (or pip install "pbtools[dask]")'
        ) from exc
    return distributed


def _by_value(fns: Iterable[Callable[..., Any]]) -> None:
    """Let cloudpickle ship task functions whose module Dask workers may not import.

    ``__main__`` functions are pickled by value anyway; a module outside pbtools and outside the
    installed packages (a benchmark script or a test module imported from a path) is
    registered with ``cloudpickle.register_pickle_by_value``."""
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - cloudpickle comes with distributed
        return
    installed = tuple(
        os.path.realpath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib", "stdlib")
    )
    for mod_name in {getattr(f, "__module__", None) for f in fns} - {None, "__main__"}:
        mod = sys.modules.get(mod_name)
        path = os.path.realpath(getattr(mod, "__file__", None) or "")
        if mod is None or mod_name.split(".")[0] == "pbtools" or path.startswith(installed):
            continue
        cloudpickle.register_pickle_by_value(mod)


def _dask(tasks, shared, dask, jobs, bar):
    distributed = import_distributed()
    own = not isinstance(dask, distributed.Client)
    cluster = None
    if own and dask == "local":
        cluster = distributed.LocalCluster(
            n_workers=plan_jobs(jobs, len(tasks))[0],
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        dask = cluster
    client = distributed.Client(dask) if own else dask
    try:
        _by_value(t.fn for t in tasks)
        scattered = {k: client.scatter(v, broadcast=True, hash=False) for k, v in shared.items()}
        futures = [
            client.submit(_dask_call, t.fn, dict(t.kwargs), **scattered, pure=False) for t in tasks
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        out: list[Any] = [None] * len(tasks)
        for fut in distributed.as_completed(futures):
            i = index[fut.key]
            try:
                out[i] = fut.result()
            except Exception as exc:  # noqa: BLE001 - re-raised with context
                client.cancel(futures)
                _raise(i, tasks[i], exc)
            if bar is not None:
                bar.update(1)
        return out
    finally:
        if own:
            client.close()
        if cluster is not None:
            cluster.close()


def run_grid(
    tasks: Callable[..., Any] | Sequence,
    params: Iterable[Mapping[str, Any]] | None = None,
    *,
    jobs: int | None = 1,
    dask: Any = None,
    seed: int | None = None,
    shared: Mapping[str, Any] | None = None,
    progress: bool | None = None,
    desc: str | None = None,
    chunksize: int | None = None,
    start_method: str | None = None,
) -> list[Any]:
    """Run independent tasks and return their results in task order.

    Parameters
    ----------
    tasks, params
        Either a function and a list of kwargs dicts (``run_grid(fn, product(w=[2, 4]))``) or a
        sequence of :class:`Task` / ``(fn, kwargs)`` pairs.
    jobs
        1 (serial, default), N > 1 worker processes, or None / 0 for every usable core.
    dask
        A Dask scheduler address (``"tcp://host:8786"``), a ``distributed.Client``, or
        ``"local"`` (a ``LocalCluster`` of ``jobs`` single-threaded worker processes, at most
        the usable cores and the tasks, started and closed by this call); when given, the
        cluster runs the tasks.
    seed
        Base seed: task i receives ``seed=task_seeds(seed, n)[i]`` if its function takes a
        ``seed`` keyword and its kwargs do not set one. Results are then identical across
        executors.
    shared
        Keyword arguments common to every task, shipped once per worker.
    progress, desc
        tqdm progress bar: None = auto (tqdm installed and stderr a tty), True / False.
    chunksize
        Tasks per process submission (default: n / (4·jobs)); results are unaffected.
    start_method
        multiprocessing start method for ``jobs > 1`` (default ``fork`` where available).

    Returns the list ``[fn(**shared, **kwargs) for each task]``. A failing task raises
    :class:`GridError` naming the task and its kwargs.
    """
    task_list = _seeded(tasks_from(tasks, params), seed)
    shared = dict(shared or {})
    clash = [i for i, t in enumerate(task_list) if set(t.kwargs) & set(shared)]
    if clash:
        raise ValueError(f"task {clash[0]} kwargs overlap the shared names {sorted(shared)}")
    if jobs is None or jobs <= 0:
        jobs = default_jobs()
    bar = progress_bar(len(task_list), progress, desc)
    try:
        if dask is not None:
            return _dask(task_list, shared, dask, jobs, bar)
        if jobs == 1 or len(task_list) <= 1:
            return _serial(task_list, shared, bar)
        return _processes(task_list, shared, jobs, chunksize, start_method, bar)
    finally:
        if bar is not None:
            bar.close()
