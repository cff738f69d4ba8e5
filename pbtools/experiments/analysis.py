"""The bias analysis of a collection: what ``pbtools analyze`` runs.

:func:`analyze` reads a collection once, infers its pool, and runs the leave-one-out experiment of
Lipani et al. 2015 §5 (:func:`pbtools.experiments.leave_one_out_experiment`) for every
configuration asked — leave-one-organization-out and leave-one-run-out, all pooled runs and the
top 75 % — scoring every evaluated run at every cut-off with the true score, the reduced pool,
Webber & Park and Lipani et al. It then measures each estimator against the truth with
:mod:`pbtools.stats`: MAE, SRE, SRE* (two-way Tukey HSD on the per-topic truth) and Kendall's τ-b.

Significance for SRE*: per run set and cut-off, the true per-topic P@n of the evaluated runs on
the truth qrels (the re-pool of that run set, PROTOCOL item 7) goes through
:func:`pbtools.stats.tukey_hsd` (score ~ run + topic). A run that did not answer a topic scores 0
there (trec_eval ``-c``), so the design is balanced; the MAE/SRE themselves use the run means
over the topics each run answered, as the experiment does.

Result tables (:class:`Analysis`), all written by :meth:`Analysis.write` as Parquet with the
parameters in the file metadata:

=================  ==========================================================================
``properties``     one row: ``collection``, ``R``, ``O``, ``R_p``, ``d``, ``T`` (+ run files)
``scores``         ``leave_out``, ``runs``, ``measure``, ``estimator``, ``name``, ``left_out``,
                   ``true``,
                   ``estimate`` + the estimators' indicators (``P``, ``AntiP``, ``k``, ``dP``,
                   ``dAntiP``, ``dk``, ``lam``, ``fired``, ``adjustment``, ``n_pooled``)
``truth``          ``runs``, ``measure``, ``name``, ``qid``, ``value``: per-topic truth
``significance``   ``runs``, ``measure``, ``name_a``, ``name_b``, ``diff``, ``p_value``, ``reject``,
                   …
``errors``         ``leave_out``, ``runs``, ``measure``, ``estimator``, ``mae``, ``sre``,
                   ``sre_star``,
                   ``tau``
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
from pbtools.frames import TrecFormatWarning, encode
from pbtools.measures.names import measure_names
from pbtools.progress import stage, staged

ESTIMATORS = ("reduced", "webber", "lipani")
MEASURES = ("P@5", "P@10", "P@20", "P@30", "P@100")
#: the bundled sample collection (TRACK layout), shipped inside the package
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


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
    #: the ``(runs, qrels, orgs)`` frames analysed (not written), for follow-up experiments
    frames: tuple | None = field(default=None, repr=False)

    TABLES = ("properties", "scores", "truth", "significance", "errors")

    def write(self, out_dir) -> list[Path]:
        """Write every table to ``out_dir/<table>.parquet`` (parameters in the metadata)."""
        from pbtools.io import write_parquet

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        meta = {**self.params, "timings": self.timings}
        paths = []
        for name in self.TABLES:
            path = out / f"{name}.parquet"
            write_parquet(getattr(self, name), path, metadata=meta)
            paths.append(path)
        return paths

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
        if not desc_file.is_file():
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
    estimators: Sequence[str] = ESTIMATORS,
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
    jobs: int = 1,
    dask=None,
    progress: bool | None = None,
    alpha: float = 0.05,
) -> Analysis:
    """Bias analysis of a collection (Lipani et al. 2015 §5, Table 2; Webber & Park §3.1).

    ``source``: a track directory ``TRACK/{QRels/,Runs/,desc.xml}`` (default: the bundled sample
    :data:`SAMPLE`), a list ``[QRELS, RUNS...]`` (``desc`` names the desc.xml), or a tuple of
    frames ``(runs, qrels, orgs)``. ``measures``: the measures estimated (each estimator on the
    ones it supports). ``leave_out``: ``"org"`` and/or ``"run"``; ``run_sets``:
    ``"all"`` and/or ``"top75"`` (the best ``fraction`` of the pooled runs per measure, the
    experiment redone inside them, PROTOCOL item 9). ``protocol="lipani2015"`` applies the
    choices that reproduce the paper (:data:`pbtools.corrections.PRESETS`) — with it, reading
    follows the preset too (run identity, float32 scores). ``jobs`` > 1 runs the
    configurations in parallel processes, ``dask`` (an address or a ``distributed.Client``) on a
    Dask cluster, with identical results (:func:`pbtools.grid.run_grid`).

    ``topics`` overrides the preset's topic averaging (:mod:`pbtools.measures.topics`;
    ``"all"`` is trec_eval's ``-c``). Topics only the runs answer, or only the qrels judge, are
    reported once (:class:`pbtools.measures.CoverageWarning`).

    ``pooled`` and ``depth`` give the pool instead of inferring it (e.g. a simulated pool
    built by a strategy, whose pooled runs and contribution depth are known).

    Returns an :class:`Analysis` (columns in the module docstring); ``timings`` holds the parse
    time of the collection and the time of everything after it.
    """
    from pbtools.grid import product, run_grid
    from pbtools.pooling.inference import infer_pool

    source = SAMPLE if source is None else source
    t0 = time.perf_counter()
    stage("reading")
    runs, qrels, orgs, col = _read(
        source, protocol=protocol, lenient=lenient, float32=float32, run_id=run_id, desc=desc
    )
    t_parse = time.perf_counter() - t0
    t1 = time.perf_counter()
    stage("pool inference")
    from pbtools.corrections.choices import resolve
    from pbtools.measures.topics import warn_coverage

    mode = str(resolve(protocol, topics=topics)["topics"])
    warn_coverage(runs, qrels, topics=mode)
    if pooled is not None and depth is not None:  # a pool whose builder is known (a strategy)
        info = SimpleNamespace(depth=int(depth), pooled_runs=sorted(map(str, pooled)))
    else:
        info = infer_pool(runs, qrels, policy=policy, depth=depth)
    if isinstance(source, tuple):
        name = "collection"
    elif col is not None and not isinstance(col, pd.DataFrame):
        name = col.name
    else:
        name = Path(source).name
    props = _properties(name, runs, qrels, orgs, info, col)
    measures = measure_names(measures)
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
    }
    stage("leave-outs and truth")
    if (jobs == 1 or len(configs) == 1) and dask is None:
        # one process: the configurations share the encoding and the merge r_p ∘ r_u
        results = _configs(configs, **shared, progress=progress)
    else:
        results = run_grid(
            _one_config,
            configs,
            jobs=jobs,
            dask=dask,
            progress=progress,
            desc="leave-one-out",
            shared=shared,
        )
    scores = pd.concat([r[0] for r in results], ignore_index=True)
    scores["name"] = scores["name"].astype(str)
    scores["left_out"] = scores["left_out"].astype(str)
    # the truth depends on the run set only: one per run set
    seen: dict[str, pd.DataFrame] = {}
    for cfg, (_s, t) in zip(configs, results, strict=True):
        seen.setdefault(cfg["runs"], t)
    truth = pd.concat(list(seen.values()), ignore_index=True)
    stage("significance")
    significance = stats.tukey_hsd(truth, by=["runs", "measure"], alpha=alpha)
    keys = ["leave_out", "runs", "measure", "estimator"]
    keyed = scores[[*keys, "name", "true", "estimate"]]
    errors = stats.error_table(keyed, significance, by=keys, alpha=alpha)
    tau = stats.kendall_tau(keyed, by=keys)
    errors = errors.merge(tau, on=keys, how="left")
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
        "topics": mode,
        "policy": policy,
        "alpha": alpha,
        "depth": int(info.depth),
        "pooled_runs": list(info.pooled_runs),
    }
    return Analysis(
        properties=props,
        scores=scores,
        truth=truth,
        significance=significance,
        errors=errors,
        params=params,
        timings={"parse": t_parse, "analysis": t_analysis},
        frames=(runs, qrels, orgs),
    )


def _configs(
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
    )
    for cfg, (res, _truth) in zip(configs, results, strict=True):
        res.insert(0, "leave_out", cfg["leave_out"])
    return results


def _one_config(leave_out, runs, **shared):
    """One leave-one-out configuration (a grid task for ``jobs`` > 1 or Dask)."""
    return _configs([{"leave_out": leave_out, "runs": runs}], **shared)[0]


def error_summary(errors: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and estimator: mean MAE, total SRE and SRE*, mean τ over the cut-offs."""
    g = errors.groupby(["leave_out", "runs", "estimator"], observed=True, sort=False)
    return g.agg(
        mae=("mae", "mean"), sre=("sre", "sum"), sre_star=("sre_star", "sum"), tau=("tau", "mean")
    ).reset_index()


__all__ = ["Analysis", "analyze", "error_summary", "ESTIMATORS", "MEASURES", "SAMPLE"]
