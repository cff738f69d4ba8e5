"""Leave-one-out experiment drivers that return tidy result frames (Lipani et al. 2015 §5).

:func:`leave_one_out_experiment` runs the leave-one-organisation-out (or leave-one-run-out)
experiment of Lipani et al. 2015 / Webber & Park 2009 §3.1 over a whole collection: every
evaluated pooled run is scored on the qrels without its unit's contributions by every estimator,
and compared with its true score. The result feeds :func:`pbtools.stats.mae`, :func:`~pbtools.
stats.sre`, :func:`~pbtools.stats.error_table` directly (``name``, ``true``, ``estimate`` + keys).

With ``protocol="lipani2015"`` it follows PROTOCOL-lipani2015 items 1-16 literally and
reproduces the "Ad Hoc 2" rows of Lipani et al. 2015 Table 2 exactly (tests/test_lipani2015.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from pbtools.corrections import estimate, resolve
from pbtools.frames import encode, judge, require_columns
from pbtools.pooling import leave_one_out, repool
from pbtools.rerank import merge, precision_at, round_half_up, run_means

__all__ = ["leave_one_out_experiment", "load"]


def load(collection_or_frames, *, protocol: str | None = None, float32: bool | None = None,
         run_id: str | None = None):
    """``(runs, qrels, orgs)`` from a track directory, an io ``Collection`` or a 3-tuple.

    A path is read with :func:`pbtools.io.read_collection` (``lenient=True``) with the
    protocol's ``float32`` and ``run_id`` choices (PROTOCOL items 1-2).
    """
    if isinstance(collection_or_frames, tuple):
        return collection_or_frames
    if hasattr(collection_or_frames, "runs") and hasattr(collection_or_frames, "qrels"):
        c = collection_or_frames
        return c.runs, c.qrels, c.orgs
    import warnings

    from pbtools.frames import TrecFormatWarning
    from pbtools.io import read_collection
    opts = resolve(protocol, float32=float32, run_id=run_id)
    rid = str(opts["run_id"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        c = read_collection(collection_or_frames, lenient=True, float32=bool(opts["float32"]),
                            run_id="file" if rid == "lipani2015" else rid)
    c.runs.attrs = {}
    c.qrels.attrs = {}
    orgs = c.orgs
    if rid == "lipani2015":
        orgs = _orgs_by_tag(c.files, c.orgs)
    return c.runs, c.qrels, orgs


def _file_tag(path) -> str | None:
    """Column 6 of the first non-blank line of a run file (gzip-aware)."""
    import gzip

    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rt") if gz else open(path)) as fh:
        for line in fh:
            f = line.split()
            if f:
                return f[5] if len(f) >= 6 else None
    return None


def _orgs_by_tag(files: pd.DataFrame, orgs: pd.DataFrame) -> pd.DataFrame:
    """PROTOCOL item 1: runs named by file, organisation looked up by their tag.

    A file whose tag ``desc.xml`` does not list (TREC-2: ``input.prc1``/``input.prc2``, tag
    ``prceo1``) keeps its own run in the pool but gets no organisation, so it is never evaluated.
    """
    org_of = dict(zip(orgs["name"].astype(str), orgs["org"].astype(str), strict=True))
    rows = []
    for f, name in zip(files["file"], files["name"].astype(str), strict=True):
        tag = _file_tag(f)
        if tag in org_of:
            rows.append((name, org_of[tag]))
    return pd.DataFrame(rows, columns=["name", "org"]).drop_duplicates("name")


def _pool_info(runs, qrels, pooled, depth, policy):
    if pooled is not None and depth is not None:
        return list(map(str, pooled)), int(depth)
    from pbtools.inference import infer_pool
    info = infer_pool(runs, qrels, policy=policy)
    return (list(map(str, pooled)) if pooled is not None else list(info.pooled_runs),
            int(depth) if depth is not None else int(info.depth))


def _scores(runs, qrels, cutoffs, decimals):
    """Run-level P@n of ``runs`` on ``qrels`` (rounded when ``decimals``)."""
    j = judge(runs[runs["rank"].to_numpy() <= max(cutoffs)], qrels, keys=[])
    m = run_means(precision_at(j, cutoffs), values=("P",), decimals=decimals)
    m["name"] = m["name"].astype(str)
    return m


def leave_one_out_experiment(collection_or_frames, cutoffs: Sequence[int] = (5, 10, 20, 30, 100),
                             by: str = "org", runs: str = "all",
                             estimators: Iterable[str] = ("reduced", "webber", "lipani"),
                             protocol: str | None = None, *, pooled: Iterable[str] | None = None,
                             depth: int | None = None, fraction: float = 0.75,
                             alpha: float | None = None, tie: str | None = None,
                             indicator: str | None = None, rp: str | None = None,
                             decimals: int | None = None, replace: bool | None = None,
                             pool_policy: str | None = None) -> pd.DataFrame:
    """Leave-one-unit-out estimation errors over a collection (Lipani §5, PROTOCOL 7-16).

    Steps (PROTOCOL item numbers):

    1. ``pooled``/``depth`` default to :func:`pbtools.inference.infer_pool` (items 4-6).
    2. ``runs="all"``: the run set S = the pooled runs; ``runs="top75"``: per cut-off, S = the best
       ⌊fraction·|R_p|⌋ pooled runs by P@n (rounded to 4 decimals, stable descending sort) on
       the re-pooled qrels (item 9) — and the whole experiment is redone inside S.
    3. The truth is P@n on ``repool(qrels, S, d)`` (items 7, 14).
    4. For every unit (organisation from ``orgs``, or run; ``by``), the reduced qrels are the
       re-pool of S without the unit (item 8); each run of S that ``orgs`` lists (runs it does
       not list stay in the pool but are never evaluated, item 1) is scored on its unit's reduced
       qrels by every estimator, with R_p = S \\ {r_u} (``rp="run"``, item 12) or S \\ unit
       (``rp="org"``).

    ``collection_or_frames``: a track directory, an io ``Collection`` or ``(runs, qrels, orgs)``
    frames. Choices not given come from ``protocol`` (``corrections.PRESETS``) or the
    principled defaults (``corrections.DEFAULTS``).

    Returns one row per (run, n, estimator): ``name``, ``n``, ``estimator``, ``runs`` (``"all"``
    or ``"top75"``), ``left_out`` (the unit), ``true``, ``estimate`` and the estimator's
    indicators (``P``, ``AntiP``, ``k``, ``dP``, ``dAntiP``, ``dk``, ``lam``, ``fired``,
    ``adjustment``, ``n_pooled``).
    """
    opts = resolve(protocol, alpha=alpha, tie=tie, indicator=indicator, rp=rp,
                   decimals=decimals, replace=replace, pool_policy=pool_policy)
    if runs not in ("all", "top75"):
        raise ValueError(f"runs must be 'all' or 'top75', got {runs!r}")
    if by not in ("org", "run"):
        raise ValueError(f"by must be 'org' or 'run', got {by!r}")
    R, Q, O = load(collection_or_frames, protocol=protocol)
    require_columns(O, ("name", "org"), "orgs")
    dec = opts["decimals"]
    pool_names, d = _pool_info(R, Q, pooled, depth, str(opts.get("pool_policy", "lipani2015")))
    S_all = R[R["name"].astype(str).isin(pool_names)]
    cutoffs = sorted({int(n) for n in cutoffs})
    if runs == "all":
        blocks = [(cutoffs, pool_names)]
    else:
        truth0 = repool(Q, S_all, d)
        sc = _scores(S_all, truth0, cutoffs, None)
        blocks = []
        for n in cutoffs:
            s = sc[sc["n"] == n].sort_values("name", kind="stable")
            v = round_half_up(s["P"].to_numpy(), 4)
            order = np.argsort(-v, kind="stable")
            keep = int(np.floor(fraction * len(s) + 1e-9))
            blocks.append(([n], list(s["name"].to_numpy()[order[:keep]])))
    # the merge r_p ∘ r_u depends on the runs only: once for every pair of pooled runs
    merged = None
    if "lipani" in estimators:
        evaluated = sorted(set(O["name"].astype(str)) & set(pool_names))
        U_all = S_all[S_all["name"].astype(str).isin(evaluated)]
        merged = merge(S_all, U_all, alpha=float(opts["alpha"]), tie=str(opts["tie"]),
                       depth=max(cutoffs))
    out = []
    for cut, names in blocks:
        out.append(_experiment_block(R, Q, O, names, d, cut, by, list(estimators), opts, dec,
                                     merged))
    res = pd.concat(out, ignore_index=True)
    res.insert(3, "runs", runs)
    return res


def _experiment_block(R, Q, O, names, d, cutoffs, by, estimators, opts, dec, merged=None):
    S = R[R["name"].astype(str).isin(names)].reset_index(drop=True)
    truth = repool(Q, S, d)
    orgs = O.astype({"name": str, "org": str})
    orgs = orgs[orgs["name"].isin(names)]
    unit_of = dict(zip(orgs["name"], orgs["org"] if by == "org" else orgs["name"], strict=True))
    evaluated = sorted(unit_of)
    reduced = leave_one_out(Q, S, d, by=by, orgs=O if by == "org" else None,
                            units=sorted(set(unit_of.values())), repool=True)
    U = S[S["name"].astype(str).isin(evaluated)].copy()
    U["left_out"] = encode(U["name"].astype(str).map(unit_of))
    names_s = pd.unique(S["name"].astype(str))
    if opts["rp"] == "run":
        rp_pairs = [(u, p) for u in evaluated for p in names_s if p != u]
    else:
        rp_pairs = [(u, p) for u in evaluated for p in names_s
                    if unit_of.get(p, f"\0{p}") != unit_of[u]]
    rp_pairs = pd.DataFrame(rp_pairs, columns=["unpooled", "name"])
    est = [e for e in estimators if e != "true"]
    res = estimate(S, U, reduced, rp_pairs=rp_pairs, depth=d,
                   measures=[f"P@{n}" for n in cutoffs], estimators=est,
                   alpha=float(opts["alpha"]), tie=str(opts["tie"]),
                   indicator=str(opts["indicator"]), decimals=dec, replace=bool(opts["replace"]),
                   merged=merged)
    true = _scores(U, truth, cutoffs, dec).rename(columns={"P": "true"})
    res["n"] = res["measure"].str.extract(r"@(\d+)$")[0].astype(int)
    res = res.merge(true, on=["name", "n"], how="left")
    res["left_out"] = res["name"].map(unit_of)
    res = res.rename(columns={"value": "estimate"})
    cols = ["name", "n", "estimator", "left_out", "true", "estimate", "P", "AntiP", "k", "dP",
            "dAntiP", "dk", "lam", "fired", "adjustment", "n_pooled"]
    return res[cols].sort_values(["n", "estimator", "name"], kind="stable").reset_index(drop=True)
