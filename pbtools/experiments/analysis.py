"""The bias analysis of a collection: what ``pbtools analyze`` runs.

:func:`analyze` reads a collection once, infers its pool, and runs the leave-one-out experiment of
Lipani et al. 2015 §5 (:func:`pbtools.experiments.leave_one_out_experiment`) for every
configuration asked — leave-one-organization-out and leave-one-run-out, all pooled runs and the
top 75 % — scoring every evaluated run at every cut-off with the true score, the reduced pool,
Webber & Park and Lipani et al. It then measures each estimator against the truth with
:mod:`pbtools.stats`: MAE, SRE, SRE* and Kendall's τ-b. SRE*'s test (``sre_test``: two-way Tukey
HSD, an unadjusted paired t-test, or the reference tool's p-values files) runs per run set and
cut-off on the per-topic truth over the same topics as the ranking it checks (``ranked``, each
run's topics as ``topics`` defines them; :func:`pbtools.stats.pair_significance`).

Result tables (:class:`Analysis`), all written by :meth:`Analysis.write` as Parquet with the
parameters in the file metadata:

=================  ==========================================================================
``properties``     one row: ``collection``, ``R``, ``O``, ``R_p``, ``d``, ``T`` (+ run files)
``scores``         ``leave_out``, ``runs``, ``measure``, ``estimator``, ``name``, ``left_out``,
                   ``true``, ``estimate`` + the estimators' indicators (``P``, ``AntiP``, ``k``,
                   ``dP``, ``dAntiP``, ``dk``, ``lam``, ``fired``, ``adjustment``, ``n_pooled``)
``truth``          ``runs``, ``measure``, ``name``, ``qid``, ``value``, ``ranked``: per-topic
                   truth on every qrels topic, ``ranked`` the topics of the run's average
``significance``   ``runs``, ``measure``, ``name_a``, ``name_b``, ``p_value``, ``reject``, …
``errors``         ``leave_out``, ``runs``, ``measure``, ``estimator``, ``mae``, ``sre``,
                   ``sre_star``, ``tau``, ``mae_low``, ``mae_high``, ``sre_low``, ``sre_high``
                   (95 % paired bootstrap over the runs: :func:`pbtools.stats.error_intervals`)
``differences``    ``leave_out``, ``runs``, ``measure``, ``estimator_a``, ``estimator_b``,
                   ``mae_diff`` (a − b), ``cut`` (1 − MAE_a/MAE_b) and ``sre_diff`` with their
                   intervals, ``significant`` (the MAE difference's interval excludes 0)
=================  ==========================================================================
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from pbtools import stats
from pbtools.corrections.registry import defaults, warn_skipped
from pbtools.engine.parallel import MAX_THREADS
from pbtools.experiments.load import SAMPLE, collection_name
from pbtools.frames import TrecFormatWarning, encode
from pbtools.measures.names import measure_names
from pbtools.progress import stage, staged
from pbtools.threads import cores_for, limited_threads, max_threads

#: the default estimators when the module was imported; ``analyze(estimators=None)`` reads the
#: registry at call time (:func:`pbtools.corrections.registry.defaults`)
ESTIMATORS = defaults("analyze")
MEASURES = ("P@5", "P@10", "P@20", "P@30", "P@100")


@dataclass
class Analysis:
    """Everything :func:`analyze` computed; see the module docstring for the columns."""

    properties: pd.DataFrame
    scores: pd.DataFrame
    truth: pd.DataFrame
    significance: pd.DataFrame
    errors: pd.DataFrame
    params: dict
    timings: dict = field(default_factory=dict)
    differences: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: the ``(runs, qrels, orgs)`` frames analysed (not written), for follow-up experiments
    frames: tuple | None = field(default=None, repr=False)
    #: the input repairs of ``lenient=True`` (``file``, ``line``, ``problem``, ``action``; not
    #: written); None when the frames were given or read under a protocol preset
    repairs: pd.DataFrame | None = field(default=None, repr=False)

    TABLES = ("properties", "scores", "truth", "significance", "errors", "differences")

    def write(self, out_dir) -> list[Path]:
        """Write every table to ``out_dir/<table>.parquet`` (parameters in the metadata) as
        one result set, all or nothing, with ``manifest.json``
        (:func:`pbtools.io.write_results`; read it back with :func:`pbtools.io.read_results`)."""
        from pbtools.io import write_results

        meta = {**self.params, "timings": self.timings}
        tables = {name: getattr(self, name) for name in self.TABLES}
        return write_results(out_dir, tables, params=self.params, metadata=meta)

    def report(self, *, wide: bool = False, verbose: bool = False) -> str:
        """The terminal report (:func:`pbtools.experiments.report.text_report`)."""
        from pbtools.experiments.report import text_report

        return text_report(self, wide=wide, verbose=verbose)


def _read(source, *, protocol, lenient, float32, run_id, desc):
    """``(runs, qrels, orgs, collection)`` read once for every configuration."""
    from pbtools import experiments, io

    if isinstance(source, tuple):
        runs, qrels, orgs = source
        return runs, qrels, orgs, None
    if protocol is not None:  # the preset decides how runs are read (PROTOCOL items 1-2)
        runs, qrels, orgs = experiments.load(source, protocol=protocol, desc=desc)
        if desc is None and isinstance(source, list | tuple):
            return runs, qrels, orgs, None
        desc_file = Path(desc) if desc is not None else Path(source) / "desc.xml"
        if not desc_file.is_file() or "one_org_per_run" in orgs.attrs:
            return runs, qrels, orgs, None
        with warnings.catch_warnings():  # its repairs were reported by load() already
            warnings.simplefilter("ignore", TrecFormatWarning)
            return runs, qrels, orgs, io.read_orgs(desc_file, lenient=True)
    paths = [source] if not isinstance(source, list | tuple) else list(source)
    col = io.load_collection(paths, desc=desc, lenient=lenient, float32=float32, run_id=run_id)
    runs, qrels = col.runs, col.qrels
    runs.attrs, qrels.attrs = {}, {}
    return runs, qrels, col.orgs, col


def _properties(name, runs, qrels, orgs, info, col) -> pd.DataFrame:
    """|R|, |O|, |R_p|, d, |T| (Lipani Table 2). |O| counts the organizations of the runs, a run
    that desc.xml does not list being its own; under a protocol preset (``col`` is then the
    desc.xml frame) it counts desc.xml's organizations, as the paper does."""
    names = sorted(encode(runs["name"]).cat.categories.astype(str))
    org_of = dict(zip(orgs["name"].astype(str), orgs["org"].astype(str), strict=True))
    if isinstance(col, pd.DataFrame):
        n_orgs, col = int(col["org"].nunique()), None
    else:
        n_orgs = len({org_of.get(n, n) for n in names})
    files = col.files if col is not None else None
    if files is not None and len(files):
        per_name = files["name"].astype(str).value_counts()
        r_files = int(per_name.sum())
        rp_files = int(per_name.reindex(info.pooled_runs).fillna(1).sum())
    else:
        r_files, rp_files = len(names), len(info.pooled_runs)
    return pd.DataFrame(
        [
            {
                "collection": name,
                "R": len(names),
                "O": n_orgs,
                "R_p": len(info.pooled_runs),
                "d": int(info.depth),
                "T": int(encode(qrels["qid"]).cat.categories.size),
                "R_files": r_files,
                "R_p_files": rp_files,
                "pooled_runs": json.dumps(list(info.pooled_runs)),
            }
        ]
    )


@staged("reading", "pool inference", "leave-outs and truth", "significance", desc="analyze")
def analyze(
    source=None,
    *,
    measures: Sequence[str] = MEASURES,
    leave_out: Sequence[str] = ("org", "run"),
    run_sets: Sequence[str] = ("all", "top75"),
    estimators: Sequence[str] | None = None,
    protocol: str | None = None,
    lenient: bool = False,
    float32: bool = False,
    run_id: str = "tag",
    desc=None,
    fraction: float = 0.75,
    policy: str = "paper",
    pooled: Sequence[str] | None = None,
    depth: int | None = None,
    topics: str | None = None,
    jobs: int | None = None,
    dask=None,
    progress: bool | None = None,
    alpha: float = 0.05,
    sre_test: str | Path = "hsd",
    top_ties: str = "order",
    name: str | None = None,
) -> Analysis:
    """Bias analysis of a collection (Lipani et al. 2015 §5, Table 2; Webber & Park §3.1).

    ``source``: a track directory ``TRACK/{QRels/,Runs/,desc.xml}`` (default: the bundled sample
    :data:`SAMPLE`), a list ``[QRELS, RUNS...]`` (``desc`` names the desc.xml), or a tuple of
    frames ``(runs, qrels, orgs)``. ``measures``: any measures; an estimator skips those it
    does not correct (Lipani: P@n only; no rows, announced once as a ``SkippedMeasuresWarning``,
    ``params["skipped"]``). ``estimators``: names of
    :data:`pbtools.corrections.registry.ESTIMATORS` (default: the registry's defaults for
    ``"analyze"``, :func:`~pbtools.corrections.registry.defaults`: reduced, webber, lipani).
    ``leave_out``: ``"org"`` and/or ``"run"``; ``run_sets``:
    ``"all"`` and/or ``"top75"`` (the best ``fraction`` of the pooled runs per measure, the
    experiment redone inside them, PROTOCOL item 9). ``protocol="lipani2015"`` applies the
    choices that reproduce the paper (:data:`pbtools.corrections.PRESETS`) — with it, reading
    follows the preset too (lenient, as the reference code read dirty archives; run identity;
    float32 scores), whatever ``lenient``, ``float32`` and ``run_id`` say, and ``params``
    records the reading done (``lenient=True``, ``float32=True``, ``run_id="lipani2015"``).
    ``dask`` (a scheduler address, a ``distributed.Client`` or ``"local"`` for a
    ``LocalCluster`` of this machine's cores) runs the configurations on a Dask cluster, with
    identical results (:func:`pbtools.grid.run_grid`).

    ``sre_test``: SRE*'s significance test (:data:`pbtools.stats.SRE_TESTS`: ``"hsd"``,
    ``"t"``), or a directory of (or the one measure's) ``pValues.<metric>.csv`` files
    (:func:`pbtools.stats.pvalue_significance`). ``top_ties``: how a tie of scores at the
    top-``fraction`` cut is broken (:data:`pbtools.pooling.TIE_RULES`; each tie is warned about
    and listed in ``params["top75_ties"]``).
    ``name`` names the collection in the reports (default: its path below the folder it was
    found in, :func:`pbtools.io.track_name`: ``TREC-2/Adhoc``; ``sample`` for the bundled one).

    ``topics`` overrides the preset's topic averaging (:mod:`pbtools.measures.topics`;
    ``"all"`` is trec_eval's ``-c``). Topics only the runs answer, or only the qrels judge, are
    reported once (:class:`pbtools.measures.CoverageWarning`).

    ``pooled`` and ``depth`` give the pool instead of inferring it (e.g. a simulated pool
    built by a strategy, whose pooled runs and contribution depth are known).

    ``jobs`` is the cores to use (None or 0, the default: every usable core; 1: one thread, the
    least memory). They run the parse, the leave-out blocks and Lipani's merges as threads of
    this process; only beyond :data:`CORES_PER_PROCESS` cores are the configurations split into
    disjoint groups on worker processes, each of which redoes the encoding and the merge
    r_p ∘ r_u (:func:`plan_configs`). The tables never depend on ``jobs``; a request for more
    cores than are usable is granted what is usable, with a note on standard error.

    Returns an :class:`Analysis` (columns in the module docstring); ``timings`` holds the parse
    time of the collection (``parse``), the time of everything after it (``analysis``) and of
    its stages (``pool inference``, ``leave-outs and truth``, ``significance``), in seconds.
    """
    from pbtools.experiments.configs import run_configs
    from pbtools.grid import product
    from pbtools.pooling.inference import infer_pool
    from pbtools.presets import resolve

    source = SAMPLE if source is None else source
    # --jobs is the cores to use: this process's threads (and its workers', see plan_configs)
    cap = cores_for(jobs)[0] if dask is None else max_threads()
    with limited_threads(cap):
        t0 = time.perf_counter()
        stage("reading")
        runs, qrels, orgs, col = _read(
            source, protocol=protocol, lenient=lenient, float32=float32, run_id=run_id, desc=desc
        )
        if protocol is not None and not isinstance(source, tuple):
            # the preset read the track as its reference code does (PROTOCOL items 1-2):
            # leniently, with its float32 and run_id; the parameters record what was done
            read = resolve(protocol)
            lenient, float32, run_id = True, bool(read["float32"]), str(read["run_id"])
        t_parse = time.perf_counter() - t0
        t1 = time.perf_counter()
        stage("pool inference")
        from pbtools.measures.topics import warn_coverage

        mode = str(resolve(protocol, topics=topics)["topics"])
        warn_coverage(runs, qrels, topics=mode)
        if pooled is not None and depth is not None:  # a pool whose builder is known (a strategy)
            info = SimpleNamespace(depth=int(depth), pooled_runs=sorted(map(str, pooled)))
        else:
            info = infer_pool(runs, qrels, policy=policy, depth=depth)
        name = name or collection_name(source)
        props = _properties(name, runs, qrels, orgs, info, col)
        measures = measure_names(measures)
        estimators = defaults("analyze") if estimators is None else estimators
        skips = warn_skipped(estimators, measures, stacklevel=4)  # once (@staged: +1)
        configs = product(leave_out=list(leave_out), runs=list(run_sets))
        shared = {
            "frames": (runs, qrels, orgs),
            "measures": measures,
            "estimators": tuple(estimators),
            "protocol": protocol,
            "pooled": list(info.pooled_runs),
            "depth": int(info.depth),
            "fraction": fraction,
            "topics": topics,
            "top_ties": top_ties,
        }
        t_stage = {"pool inference": time.perf_counter() - t1}
        stage("leave-outs and truth")
        t2 = time.perf_counter()
        plan = plan_configs(configs, jobs, dask, len(runs))
        results = run_configs(configs, shared, plan, jobs=jobs, dask=dask, progress=progress)
        scores = pd.concat([r[0] for r in results], ignore_index=True)
        scores["name"] = scores["name"].astype(str)
        scores["left_out"] = scores["left_out"].astype(str)
        # the truth depends on the run set only: one per run set
        seen: dict[str, pd.DataFrame] = {}
        for cfg, (_s, t) in zip(configs, results, strict=True):
            seen.setdefault(cfg["runs"], t)
        truth = pd.concat(list(seen.values()), ignore_index=True)
        t_stage["leave-outs and truth"] = time.perf_counter() - t2
        stage("significance")
        t3 = time.perf_counter()
        significance = stats.sre_significance(
            truth, sre_test, ["runs", "measure"], alpha, compact=True
        )
        keys = ["leave_out", "runs", "measure", "estimator"]
        keyed = scores[[*keys, "name", "true", "estimate"]]
        errors = stats.error_table(keyed, significance, by=keys, alpha=alpha)
        tau = stats.kendall_tau(keyed, by=keys)
        errors = errors.merge(tau, on=keys, how="left")
        noise, differences = stats.error_intervals(keyed, keys[:-1], seed=0)
        noise = noise[[*keys, "mae_low", "mae_high", "sre_low", "sre_high"]]
        errors = errors.merge(noise, on=keys, how="left")
        t_stage["significance"] = time.perf_counter() - t3
        t_analysis = time.perf_counter() - t1
        params = {
            "collection": name,
            "measures": measures,
            "leave_out": list(leave_out),
            "run_sets": list(run_sets),
            "estimators": list(estimators),
            "protocol": protocol,
            "lenient": lenient,
            "float32": float32,
            "run_id": run_id,
            "fraction": fraction,
            "top_ties": top_ties,
            "top75_ties": next((r[0].attrs["top75_ties"] for r in results if r[0].attrs), []),
            "sre_test": str(sre_test),
            "topics": mode,
            "policy": policy,
            "alpha": alpha,
            "depth": int(info.depth),
            "pooled_runs": list(info.pooled_runs),
            # why each run is its own organization (no desc.xml …), None when desc.xml said
            "one_org_per_run": orgs.attrs.get("one_org_per_run"),
            "skipped": skips,
            "pool": "given" if pooled is not None and depth is not None else "inferred",
        }
        return Analysis(
            properties=props,
            scores=scores,
            truth=truth,
            significance=significance,
            errors=errors,
            params=params,
            timings={"parse": t_parse, "analysis": t_analysis, **t_stage},
            differences=differences,
            frames=(runs, qrels, orgs),
            repairs=None if col is None or isinstance(col, pd.DataFrame) else col.repairs,
        )


#: below this many run rows per worker process, ``analyze`` uses no worker processes: each
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


def plan_configs(configs, jobs, dask, rows: int) -> tuple[int, int, str | None]:
    """How to run ``configs`` on ``jobs`` cores: ``(processes, threads per process, note)``.

    ``jobs`` is the cores to use (None or 0: every usable core, :func:`pbtools.threads.cores_for`;
    ``note`` says why fewer were granted). Without Dask: one process — this one, on that many
    threads — up to :data:`CORES_PER_PROCESS` cores; beyond it, one worker process per
    :data:`CORES_PER_PROCESS` cores (at most one per configuration and one per
    :data:`MIN_ROWS_PER_JOB` run rows), the cores shared out as threads. A Dask cluster gets one
    single-threaded group per configuration, or ``jobs`` groups if ``jobs`` > 1
    (``dask="local"``: one per usable core).

    Examples
    --------
    >>> configs = [{"leave_out": "org", "runs": "all"}, {"leave_out": "run", "runs": "all"}]
    >>> plan_configs(configs, 1, None, 10_000_000)
    (1, 1, None)
    >>> plan_configs(configs, 2, "tcp://scheduler:8786", 10_000_000)
    (2, 1, None)
    """
    from pbtools.grid import plan_jobs

    if dask == "local":  # a LocalCluster of this machine's cores: one group per worker
        return plan_jobs(jobs if jobs and jobs > 1 else 0, len(configs))[0], 1, None
    if dask is not None:
        return (min(jobs, len(configs)) if jobs and jobs > 1 else len(configs)), 1, None
    cores, note = cores_for(jobs)
    processes = min(-(-cores // CORES_PER_PROCESS), len(configs), rows // max(MIN_ROWS_PER_JOB, 1))
    if processes <= 1:
        return 1, cores, note
    return processes, cores // processes, note


__all__ = [
    "Analysis",
    "analyze",
    "plan_configs",
    "ESTIMATORS",
    "MEASURES",
    "MIN_ROWS_PER_JOB",
    "CORES_PER_PROCESS",
    "SAMPLE",
]
