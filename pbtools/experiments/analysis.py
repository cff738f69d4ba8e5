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
from pbtools.errors import InputError
from pbtools.experiments.configs import (
    CORES_PER_PROCESS,
    MIN_ROWS_PER_JOB,
    Design,
    Execution,
    Reading,
    options_from,
    run_configs,
)
from pbtools.experiments.load import SAMPLE, collection_name
from pbtools.frames import TrecFormatWarning, encode
from pbtools.io.memory import release_memory
from pbtools.measures.names import Measure, measure_column, parse_all
from pbtools.progress import stage, staged

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
    #: the tests of every pair; None when they were streamed (``analyze(significance_to=)``)
    significance: pd.DataFrame | None
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

        if self.significance is None:
            raise ValueError(
                "the significance table was streamed, not kept (analyze(significance_to=...)): "
                "it is written where it went (Analysis.write_into)"
            )
        meta = {**self.params, "timings": self.timings}
        tables = {name: getattr(self, name) for name in self.TABLES}
        return write_results(out_dir, tables, params=self.params, metadata=meta)

    def write_into(self, out) -> list[Path]:
        """Write the tables into the result set being built ``out``
        (:func:`pbtools.io.results.building`), as :meth:`write` does; a table streamed into
        ``out`` while the analysis ran (``analyze(significance_to=out.blocks("significance"))``,
        as ``pbtools analyze -o`` does) is finished in its place. Returns the tables' paths."""
        meta = {**self.params, "timings": self.timings}
        paths = []
        for name in self.TABLES:
            table = getattr(self, name)
            if table is None:
                paths.append(out.close_blocks(name, metadata=meta))
            else:
                paths.append(out.table(name, table, metadata=meta))
        out.params = self.params
        return paths

    def report(self, *, wide: bool = False, verbose: bool = False) -> str:
        """The terminal report (:func:`pbtools.experiments.report.text_report`)."""
        from pbtools.experiments.report import text_report

        return text_report(self, wide=wide, verbose=verbose)


def _read(source, protocol, reading: Reading):
    """``(runs, qrels, orgs, collection)`` read once for every configuration."""
    from pbtools import experiments, io

    desc = reading.desc
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
    col = io.load_collection(paths, desc=desc, **reading.kwargs())
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


def analyze(
    source=None,
    *,
    measures: Sequence[str | Measure] = MEASURES,
    design: Design | None = None,
    reading: Reading | None = None,
    execution: Execution | None = None,
    name: str | None = None,
    significance_to=None,
    **options,
) -> Analysis:
    """Bias analysis of a collection (Lipani et al. 2015 §5, Table 2; Webber & Park §3.1).

    Parameters
    ----------
    source : path, list or tuple, optional
        A track directory ``TRACK/{QRels/,Runs/,desc.xml}`` (default: the bundled sample
        :data:`SAMPLE`), a list ``[QRELS, RUNS...]`` (``Reading.desc`` names the desc.xml), or
        a tuple of frames ``(runs, qrels, orgs)``.
    measures : sequence of str or Measure
        Any measures (default P@5, P@10, P@20, P@30, P@100), parsed once here
        (:func:`pbtools.measures.parse_all`); an estimator skips those it does not correct
        (Lipani: P@n only; no rows, announced once as a ``SkippedMeasuresWarning``,
        ``params["skipped"]``).
    design : Design, optional
        The experiment: leave-out units, run sets, estimators, protocol, pool, topics, SRE*'s
        test (:class:`~pbtools.experiments.configs.Design`; default ``Design()``).
    reading : Reading, optional
        How the files are read (:class:`~pbtools.experiments.configs.Reading`: ``lenient``,
        ``float32``, ``run_id``, ``desc``). Under ``protocol="lipani2015"`` the preset reads
        the track as its reference code did, and ``params`` records the reading done
        (``lenient=True``, ``float32=True``, ``run_id="lipani2015"``); ``run_id="file"`` is
        then refused (:class:`~pbtools.errors.InputError`).
    execution : Execution, optional
        Where it runs (:class:`~pbtools.experiments.configs.Execution`: ``jobs``, ``dask``,
        ``progress``), planned by :meth:`Execution.plan
        <pbtools.experiments.configs.Execution.plan>`: threads of this process, worker
        processes beyond :data:`~pbtools.experiments.configs.CORES_PER_PROCESS` cores, or a
        Dask cluster. The tables never depend on it.
    name : str, optional
        The collection's name in the reports (default: its path below the folder it was found
        in, :func:`pbtools.io.track_name`: ``TREC-2/Adhoc``; ``sample`` for the bundled one).
    significance_to : None, "discard" or a writer, optional
        Where the significance table goes. None (the default): whole, in
        ``Analysis.significance``. Otherwise it is never held whole — the one table of runs²
        rows (issue 30 item 4): computed a block of pairs at a time
        (:func:`pbtools.stats.matrix.pair_blocks`), each block looked up by SRE*'s join and
        handed to ``significance_to.write(block)`` (a
        :class:`pbtools.io.parquet.ParquetBlocks`: ``pbtools analyze -o`` gives its result
        set's, :meth:`Analysis.write_into`) or, with ``"discard"``, dropped (``pbtools
        analyze`` without ``-o``, ``pbtools report``); ``Analysis.significance`` is then None.
        Every other table is the same.
    **options
        Any field of the three option objects as a keyword, the short way to change one
        (``analyze(src, measures=["P@10"], leave_out=["org"], jobs=1)``); a field of an
        object also given is refused (:class:`~pbtools.errors.InputError`), an unknown
        keyword raises ``TypeError``.

    Returns
    -------
    Analysis
        The tables of the module docstring; ``timings`` holds the parse time of the collection
        (``parse``), the time of everything after it (``analysis``) and of its stages
        (``pool inference``, ``leave-outs and truth``, ``significance``), in seconds.

    Notes
    -----
    Topics only the runs answer, or only the qrels judge, are reported once
    (:class:`pbtools.measures.CoverageWarning`). Each tie at the top-``fraction`` cut is warned
    about and listed in ``params["top75_ties"]``.

    Examples
    --------
    >>> from pbtools.experiments import Design, Execution
    >>> a = analyze(SAMPLE, measures=["P@10"], design=Design(leave_out=["org"], run_sets=["all"]),
    ...             execution=Execution(jobs=1, progress=False))
    >>> a.errors[["leave_out", "runs", "measure", "estimator"]].to_numpy().tolist()
    [['org', 'all', 'P@10', 'lipani'], ['org', 'all', 'P@10', 'reduced'], \
['org', 'all', 'P@10', 'webber']]
    """
    opts = options_from({"design": design, "reading": reading, "execution": execution}, options)
    ms = parse_all(measures)  # the one parse: Measure objects from here to the kernels
    x, protocol, run_id = opts["execution"], opts["design"].protocol, opts["reading"].run_id
    if protocol is not None and run_id != "tag":  # as the command line refuses --run-id
        raise InputError(
            f"run_id={run_id!r} cannot apply with protocol={protocol!r}: the preset names runs "
            "by file and organizations by tag (PROTOCOL item 1)"
        )
    if significance_to is not None and significance_to != "discard":
        if not callable(getattr(significance_to, "write", None)):
            raise TypeError("significance_to: None, 'discard' or a writer with write(block)")
    sink = significance_to
    return _analyze(source, ms, opts["design"], opts["reading"], x, name, sink, x.progress)


@staged("reading", "pool inference", "leave-outs and truth", "significance", desc="analyze")
def _analyze(
    source, ms, d: Design, r: Reading, x: Execution, name, sink, progress=None
) -> Analysis:
    """:func:`analyze` on its parsed measures and option objects (``sink``: its
    ``significance_to``; ``progress``: the stages' bar, :func:`pbtools.progress.staged`)."""
    from pbtools.grid import product
    from pbtools.measures.topics import warn_coverage
    from pbtools.pooling.inference import infer_pool
    from pbtools.presets import resolve

    estimators = defaults("analyze") if d.estimators is None else d.estimators
    source = SAMPLE if source is None else source
    with x.limits():  # the cores granted: this process's threads (and its workers', see plan)
        t0 = time.perf_counter()
        stage("reading")
        runs, qrels, orgs, col = _read(source, d.protocol, r)
        if d.protocol is not None and not isinstance(source, tuple):
            # the preset read the track as its reference code does (PROTOCOL items 1-2):
            # leniently, with its float32 and run_id; the parameters record what was done
            read = resolve(d.protocol)
            done = {"lenient": True, "float32": bool(read["float32"]), "run_id": read["run_id"]}
        else:
            done = r.kwargs()
        t_parse = time.perf_counter() - t0
        t1 = time.perf_counter()
        release_memory()  # the parse's freed pages handed back, not kept to the peak
        stage("pool inference")
        mode = str(resolve(d.protocol, topics=d.topics)["topics"])
        warn_coverage(runs, qrels, topics=mode)
        if d.pooled is not None:  # a pool whose builder is known (a strategy)
            info = SimpleNamespace(depth=int(d.depth), pooled_runs=list(d.pooled))
        else:
            info = infer_pool(runs, qrels, policy=d.policy, depth=d.depth)
        name = name or collection_name(source)
        props = _properties(name, runs, qrels, orgs, info, col)
        skips = warn_skipped(estimators, ms, stacklevel=5)  # once (@staged, analyze: +2)
        configs = product(leave_out=list(d.leave_out), runs=list(d.run_sets))
        shared = {
            "frames": (runs, qrels, orgs),
            "measures": ms,
            "estimators": tuple(estimators),
            "protocol": d.protocol,
            "pooled": list(info.pooled_runs),
            "depth": int(info.depth),
            "fraction": d.fraction,
            "topics": d.topics,
            "top_ties": d.top_ties,
        }
        t_stage = {"pool inference": time.perf_counter() - t1}
        release_memory()  # pool inference's (its copies of the names)
        stage("leave-outs and truth")
        t2 = time.perf_counter()
        results = run_configs(configs, shared, x, rows=len(runs))
        scores = pd.concat([res[0] for res in results], ignore_index=True)
        scores["name"] = scores["name"].astype(str)
        scores["left_out"] = scores["left_out"].astype(str)
        # the truth depends on the run set only: one per run set
        seen: dict[str, pd.DataFrame] = {}
        for cfg, (_s, t) in zip(configs, results, strict=True):
            seen.setdefault(cfg["runs"], t)
        truth = pd.concat(list(seen.values()), ignore_index=True)
        t_stage["leave-outs and truth"] = time.perf_counter() - t2
        release_memory()  # the leave-out stage's (the encoding, the chunks)
        stage("significance")
        t3 = time.perf_counter()
        significance, errors, differences = _statistics(scores, truth, d.sre_test, d.alpha, sink)
        t_stage["significance"] = time.perf_counter() - t3
        t_analysis = time.perf_counter() - t1
        params = {
            "collection": name,
            "measures": measure_column(ms),
            "leave_out": list(d.leave_out),
            "run_sets": list(d.run_sets),
            "estimators": list(estimators),
            "protocol": d.protocol,
            "lenient": done["lenient"],
            "float32": done["float32"],
            "run_id": str(done["run_id"]),
            "fraction": d.fraction,
            "top_ties": d.top_ties,
            "top75_ties": next((res[0].attrs["top75_ties"] for res in results if res[0].attrs), []),
            "sre_test": str(d.sre_test),
            "topics": mode,
            "policy": d.policy,
            "alpha": d.alpha,
            "depth": int(info.depth),
            "pooled_runs": list(info.pooled_runs),
            # why each run is its own organization (no desc.xml …), None when desc.xml said
            "one_org_per_run": orgs.attrs.get("one_org_per_run"),
            "skipped": skips,
            "pool": "given" if d.pooled is not None else "inferred",
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


def _statistics(scores, truth, sre_test, alpha, sink=None) -> tuple:
    """``(significance, errors, differences)``: SRE*'s tests on the per-topic truth, then MAE,
    SRE, SRE*, τ and their bootstrap intervals per configuration and estimator. With a
    ``sink`` (:func:`analyze`'s ``significance_to``) the tests are computed as SRE*'s join
    reads them, a block of pairs at a time, each block then written (or dropped): the
    significance returned is None."""
    keep = sink is None
    by = ["runs", "measure"]
    significance = stats.sre_significance(truth, sre_test, by, alpha, compact=True, blocks=not keep)
    if not keep and sink != "discard":
        significance.sink = sink.write
    keys = ["leave_out", "runs", "measure", "estimator"]
    keyed = scores[[*keys, "name", "true", "estimate"]]
    errors = stats.error_table(keyed, significance, by=keys, alpha=alpha)
    if not keep:  # every block read (and written), none kept
        significance.drain()
        significance = None
    tau = stats.kendall_tau(keyed, by=keys)
    errors = errors.merge(tau, on=keys, how="left")
    noise, differences = stats.error_intervals(keyed, keys[:-1], seed=0)
    noise = noise[[*keys, "mae_low", "mae_high", "sre_low", "sre_high"]]
    errors = errors.merge(noise, on=keys, how="left")
    return significance, errors, differences


def plan_configs(configs, jobs, dask, rows: int) -> tuple[int, int, str | None]:
    """``(processes, threads per process, note)`` for ``configs``:
    :meth:`Execution(jobs, dask).plan(len(configs), rows)
    <pbtools.experiments.configs.Execution.plan>`, the one scheduler (kept for callers of the
    name).

    >>> plan_configs([{"leave_out": "org", "runs": "all"}], 1, None, 10_000_000)
    (1, 1, None)
    """
    return tuple(Execution(jobs=jobs, dask=dask).plan(len(configs), rows))


__all__ = [
    "Analysis",
    "analyze",
    "plan_configs",
    "ESTIMATORS",
    "MEASURES",
    "MIN_ROWS_PER_JOB",
    "CORES_PER_PROCESS",
    "SAMPLE",
    "Design",
    "Execution",
    "Reading",
]
