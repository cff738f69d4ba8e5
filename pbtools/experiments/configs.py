"""How :func:`pbtools.experiments.analyze` runs its leave-one-out configurations: in one call
on this process's threads (the configurations share the encoding and the merge), or as
disjoint groups on worker processes or a Dask cluster (:func:`pbtools.grid.run_grid`), as
:func:`pbtools.experiments.analysis.plan_configs` decides; the tables never depend on it."""

from __future__ import annotations

from pbtools.threads import limited_threads

__all__ = ["config_group", "config_tables", "run_configs"]


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
    scores keyed by the configuration's ``leave_out``."""
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


def run_configs(configs, shared: dict, plan, *, jobs, dask, progress):
    """``(scores, truth)`` per configuration, in order: in one call on this process's threads
    (the configurations share the encoding and the merge), or as disjoint groups on worker
    processes or Dask, as ``plan`` says (``(processes, threads, note)`` of
    :func:`pbtools.experiments.analysis.plan_configs`; ``jobs`` as asked, for the note).
    ``shared``: the other arguments of :func:`config_tables`."""
    from pbtools.grid import run_grid
    from pbtools.progress import write

    n, threads, note = plan
    if note is not None:
        k = threads * n
        write(f"analyze: --jobs {jobs}: using {k} core{'s' if k != 1 else ''}: {note}")
    if n == 1 and dask is None:  # on the threads :func:`analyze` granted
        return config_tables(configs, **shared, progress=progress)
    # heaviest first (top75 redoes the experiment per measure), dealt round-robin
    order = sorted(range(len(configs)), key=lambda i: configs[i]["runs"] != "top75")
    groups = [order[g::n] for g in range(n)]
    parts = run_grid(
        config_group,
        [{"group": [configs[i] for i in g], "threads": threads} for g in groups],
        jobs=n,
        dask=dask,
        progress=progress,
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
