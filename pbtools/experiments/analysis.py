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
``scores``         ``by``, ``runs``, ``n``, ``estimator``, ``name``, ``left_out``, ``true``,
                   ``estimate`` + the estimators' indicators (``P``, ``AntiP``, ``k``, ``dP``,
                   ``dAntiP``, ``dk``, ``lam``, ``fired``, ``adjustment``, ``n_pooled``)
``truth``          ``runs``, ``n``, ``name``, ``qid``, ``measure``, ``value``: per-topic truth
``significance``   ``runs``, ``n``, ``name_a``, ``name_b``, ``diff``, ``p_value``, ``reject``, …
``errors``         ``by``, ``runs``, ``n``, ``estimator``, ``mae``, ``sre``, ``sre_star``,
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

import pandas as pd

from pbtools import stats
from pbtools.frames import TrecFormatWarning, encode, unify

ESTIMATORS = ("reduced", "webber", "lipani")
CUTOFFS = (5, 10, 20, 30, 100)
SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


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

    def report(self) -> str:
        """A readable terminal report: properties, then one error table per configuration."""
        p = self.properties.iloc[0]
        lines = [
            f"collection {p['collection']}: |R| = {p['R']}, |O| = {p['O']}, "
            f"|R_p| = {p['R_p']}, d = {p['d']}, |T| = {p['T']}"
        ]
        if p["R_files"] != p["R"]:
            lines.append(
                f"  ({p['R_files']} run files, {p['R_p_files']} of them pooled: "
                "several files share a run tag)"
            )
        if self.params.get("protocol"):
            lines.append(f"  protocol: {self.params['protocol']}")
        for (by, runs), grp in self.errors.groupby(["by", "runs"], sort=False, observed=True):
            lines.append("")
            lines.append(
                f"leave-one-{'organization' if by == 'org' else 'run'}-out, "
                f"{'all pooled runs' if runs == 'all' else 'top 75% of the runs'}"
                f" ({self._evaluated(by, runs)} runs evaluated)"
            )
            table = grp.pivot_table(
                index="n",
                columns="estimator",
                values=["mae", "sre", "sre_star", "tau"],
                observed=True,
                sort=False,
            )
            table = table.reorder_levels([1, 0], axis=1)
            ests = [e for e in self.params["estimators"] if e in grp["estimator"].unique()]
            cols = [(e, m) for e in ests for m in ("mae", "sre", "sre_star", "tau")]
            table = table.reindex(columns=pd.MultiIndex.from_tuples(cols))
            header = "  P@n " + "".join(f"{e:>32s}" for e in ests)
            sub = "      " + "".join(
                f"{'MAE':>9s}{'SRE':>6s}{'SRE*':>6s}{'tau':>11s}" for _ in ests
            )
            lines += [header, sub]
            for n, row in table.iterrows():
                cells = "".join(
                    f"{row[(e, 'mae')]:9.4f}{int(row[(e, 'sre')]):6d}"
                    f"{_int(row[(e, 'sre_star')]):>6s}{row[(e, 'tau')]:11.4f}"
                    for e in ests
                )
                lines.append(f"  {n:<4d}{cells}")
        if self.timings:
            t = self.timings
            lines.append("")
            lines.append(
                f"time: parse {t['parse']:.2f} s, analysis {t['analysis']:.2f} s "
                f"({t['analysis'] / max(t['parse'], 1e-9):.2f}× the parse time)"
            )
        return "\n".join(lines)

    def _evaluated(self, by: str, runs: str) -> int:
        s = self.scores
        sel = s[(s["by"] == by) & (s["runs"] == runs)]
        return int(sel.groupby("n", observed=True)["name"].nunique().max())


def _int(v) -> str:
    return "-" if pd.isna(v) else str(int(v))


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


def _shared_dictionaries(runs: pd.DataFrame, qrels: pd.DataFrame):
    """Recode ``qid`` and ``docno`` of runs and qrels onto one dictionary each, once, so that
    every later join (judge, re-pools, reductions) takes the integer fast path."""
    runs, qrels = runs.copy(deep=False), qrels.copy(deep=False)
    for col in ("qid", "docno"):
        runs[col], qrels[col] = unify(runs[col], qrels[col])
    return runs, qrels


def _truth(runs, qrels, pooled, depth, cutoffs, run_sets, evaluated, fraction):
    """Per-topic true P@n of the evaluated runs, per run set and cut-off (for Tukey HSD)."""
    from pbtools import measures
    from pbtools.pooling.reductions import repool, top_fraction

    # P@n needs the top n, the pool the top d
    runs = runs[runs["rank"].to_numpy() <= max(max(cutoffs), depth)]
    names = runs["name"].astype(str)
    s_all = runs[names.isin(pooled)]
    s_names = s_all["name"].astype(str)
    parts = []
    base = repool(qrels, s_all, depth)
    p_at = {n: f"P@{n}" for n in cutoffs}
    if "all" in run_sets:  # one truth for every cut-off: one evaluation
        ev = sorted({r for n in cutoffs for r in evaluated.get(("all", n), [])})
        per = measures.evaluate(
            s_all[s_names.isin(ev)],
            base,
            list(p_at.values()),
            per_topic=True,
            all_topics=True,
            warn=False,
        )
        per["name"], per["measure"] = per["name"].astype(str), per["measure"].astype(str)
        for n in cutoffs:
            ev_n = evaluated.get(("all", n), [])
            if len(ev_n) >= 2:
                sel = per[(per["measure"] == p_at[n]) & per["name"].isin(ev_n)]
                parts.append(sel.assign(runs="all", n=n))
    if "top75" in run_sets:  # per cut-off its own run subset, hence its own truth
        avg = measures.evaluate(s_all, base, list(p_at.values()), warn=False)
        avg["name"], avg["measure"] = avg["name"].astype(str), avg["measure"].astype(str)
        for n in cutoffs:
            ev = evaluated.get(("top75", n), [])
            if len(ev) < 2:
                continue
            scores_n = avg[avg["measure"] == p_at[n]].sort_values("name", kind="stable")
            keep = top_fraction(scores_n, frac=fraction)["name"].astype(str).tolist()
            missing = sorted(set(ev) - set(keep))
            if missing:
                raise RuntimeError(
                    f"top-{fraction:.0%} selection disagrees with the "
                    f"experiment's at P@{n}: {missing}"
                )
            truth_q = repool(qrels, s_all[s_names.isin(keep)], depth)
            per = measures.evaluate(
                s_all[s_names.isin(ev)],
                truth_q,
                [p_at[n]],
                per_topic=True,
                all_topics=True,
                warn=False,
            )
            parts.append(per.assign(runs="top75", n=n))
    truth = pd.concat(parts, ignore_index=True)
    for c in ("name", "qid", "measure"):
        truth[c] = truth[c].astype(str)
    return truth[["runs", "n", "name", "qid", "measure", "value"]]


def analyze(
    source=None,
    *,
    cutoffs: Sequence[int] = CUTOFFS,
    leave_out: Sequence[str] = ("org", "run"),
    run_sets: Sequence[str] = ("all", "top75"),
    estimators: Sequence[str] = ESTIMATORS,
    protocol: str | None = None,
    lenient: bool = False,
    float32: bool = False,
    run_id: str = "tag",
    desc=None,
    fraction: float = 0.75,
    policy: str = "lipani2015",
    jobs: int = 1,
    dask=None,
    progress: bool | None = None,
    alpha: float = 0.05,
) -> Analysis:
    """Bias analysis of a collection (Lipani et al. 2015 §5, Table 2; Webber & Park §3.1).

    ``source``: a track directory ``TRACK/{QRels/,Runs/,desc.xml}`` (default: the bundled sample
    ``data/sample``), a list ``[QRELS, RUNS...]`` (``desc`` names the desc.xml), or a tuple of
    frames ``(runs, qrels, orgs)``. ``leave_out``: ``"org"`` and/or ``"run"``; ``run_sets``:
    ``"all"`` and/or ``"top75"`` (the best ``fraction`` of the pooled runs per cut-off, the
    experiment redone inside them, PROTOCOL item 9). ``protocol="lipani2015"`` applies the
    choices that reproduce the paper (:data:`pbtools.corrections.PRESETS`) — with it, reading
    follows the preset too (run identity, float32 scores). ``jobs`` > 1 runs the
    configurations in parallel processes, ``dask`` (an address or a ``distributed.Client``) on a
    Dask cluster, with identical results (:func:`pbtools.grid.run_grid`).

    Returns an :class:`Analysis` (columns in the module docstring); ``timings`` holds the parse
    time of the collection and the time of everything after it.
    """
    from pbtools.grid import product, run_grid
    from pbtools.pooling.inference import infer_pool

    source = SAMPLE if source is None else source
    t0 = time.perf_counter()
    runs, qrels, orgs, col = _read(
        source, protocol=protocol, lenient=lenient, float32=float32, run_id=run_id, desc=desc
    )
    t_parse = time.perf_counter() - t0
    t1 = time.perf_counter()
    runs, qrels = _shared_dictionaries(runs, qrels)
    info = infer_pool(runs, qrels, policy=policy)
    if isinstance(source, tuple):
        name = "collection"
    elif col is not None and not isinstance(col, pd.DataFrame):
        name = col.name
    else:
        name = Path(source).name
    props = _properties(name, runs, qrels, orgs, info, col)
    cutoffs = sorted({int(n) for n in cutoffs})
    configs = product(by=list(leave_out), runs=list(run_sets))
    shared = {
        "frames": (runs, qrels, orgs),
        "cutoffs": cutoffs,
        "estimators": tuple(estimators),
        "protocol": protocol,
        "pooled": list(info.pooled_runs),
        "depth": int(info.depth),
        "fraction": fraction,
    }
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
    scores = pd.concat(results, ignore_index=True)
    scores["name"] = scores["name"].astype(str)
    scores["left_out"] = scores["left_out"].astype(str)
    evaluated = {
        (rs, int(n)): sorted(g["name"].unique())
        for (rs, n), g in scores.groupby(["runs", "n"], observed=True)
    }
    truth = _truth(
        runs,
        qrels,
        list(info.pooled_runs),
        int(info.depth),
        cutoffs,
        list(run_sets),
        evaluated,
        fraction,
    )
    significance = stats.tukey_hsd_by(truth, by=["runs", "n"], alpha=alpha)
    keyed = scores[["by", "runs", "n", "estimator", "name", "true", "estimate"]]
    keys = ["by", "runs", "n", "estimator"]
    errors = stats.error_table(keyed, significance, by=keys, alpha=alpha)
    tau = stats.kendall_tau_by(keyed, by=keys)
    errors = errors.merge(tau, on=keys, how="left")
    t_analysis = time.perf_counter() - t1
    params = {
        "collection": name,
        "cutoffs": cutoffs,
        "leave_out": list(leave_out),
        "run_sets": list(run_sets),
        "estimators": list(estimators),
        "protocol": protocol,
        "lenient": lenient,
        "float32": float32,
        "run_id": run_id,
        "fraction": fraction,
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
    configs, frames, cutoffs, estimators, protocol, pooled, depth, fraction, progress=False
):
    """Several leave-one-out configurations in one call: the experiments' tidy frames + keys."""
    from pbtools import experiments

    results = experiments.leave_one_out_experiments(
        frames,
        configs,
        cutoffs=cutoffs,
        estimators=estimators,
        protocol=protocol,
        pooled=pooled,
        depth=depth,
        fraction=fraction,
        progress=progress,
    )
    for cfg, res in zip(configs, results, strict=True):
        res.insert(0, "by", cfg["by"])
    return results


def _one_config(by, runs, **shared):
    """One leave-one-out configuration (a grid task for ``jobs`` > 1 or Dask)."""
    return _configs([{"by": by, "runs": runs}], **shared)[0]


def error_summary(errors: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and estimator: mean MAE, total SRE and SRE*, mean τ over the cut-offs."""
    g = errors.groupby(["by", "runs", "estimator"], observed=True, sort=False)
    return g.agg(
        mae=("mae", "mean"), sre=("sre", "sum"), sre_star=("sre_star", "sum"), tau=("tau", "mean")
    ).reset_index()


__all__ = ["Analysis", "analyze", "error_summary", "ESTIMATORS", "CUTOFFS", "SAMPLE"]
