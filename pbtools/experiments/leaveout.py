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

from pbtools.corrections.core import _dense_estimate, resolve
from pbtools.corrections.rerank import _sorted_runs, precision_at, round_half_up, run_means
from pbtools.experiments.load import load
from pbtools.frames import as_qrels, encode, judge, require_columns
from pbtools.pooling.dense import DenseRuns, item_means, merge_rows, run_rows, topic_scores

__all__ = ["leave_one_out_experiment", "leave_one_out_experiments"]


def _pool_info(runs, qrels, pooled, depth, policy):
    if pooled is not None and depth is not None:
        return list(map(str, pooled)), int(depth)
    from pbtools.pooling.inference import infer_pool

    info = infer_pool(runs, qrels, policy=policy)
    return (
        list(map(str, pooled)) if pooled is not None else list(info.pooled_runs),
        int(depth) if depth is not None else int(info.depth),
    )


def _scores(runs, qrels, cutoffs, decimals):
    """Run-level P@n of ``runs`` on ``qrels`` (rounded when ``decimals``)."""
    j = judge(runs[runs["rank"].to_numpy() <= max(cutoffs)], qrels, keys=[])
    m = run_means(precision_at(j, cutoffs), values=("P",), decimals=decimals)
    m["name"] = m["name"].astype(str)
    return m


def leave_one_out_experiment(
    collection_or_frames,
    cutoffs: Sequence[int] = (5, 10, 20, 30, 100),
    by: str = "org",
    runs: str = "all",
    estimators: Iterable[str] = ("reduced", "webber", "lipani"),
    protocol: str | None = None,
    *,
    pooled: Iterable[str] | None = None,
    depth: int | None = None,
    fraction: float = 0.75,
    alpha: float | None = None,
    tie: str | None = None,
    indicator: str | None = None,
    rp: str | None = None,
    decimals: int | None = None,
    replace: bool | None = None,
    pool_policy: str | None = None,
) -> pd.DataFrame:
    """Leave-one-unit-out estimation errors over a collection (Lipani §5, PROTOCOL 7-16).

    Steps (PROTOCOL item numbers):

    1. ``pooled``/``depth`` default to :func:`pbtools.pooling.inference.infer_pool` (items 4-6).
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

    Implementation: the pooled runs are encoded once into the dense per-topic layout of
    ``pooling.dense``; the truth and every unit's reduced qrels are label arrays derived from
    one contributor table (no qrels frames are built), and r_p ∘ r_u is merged once for every
    pair of pooled runs and shared by all run subsets (top 75% blocks).

    Returns one row per (run, n, estimator): ``name``, ``n``, ``estimator``, ``runs`` (``"all"``
    or ``"top75"``), ``left_out`` (the unit), ``true``, ``estimate`` and the estimator's
    indicators (``P``, ``AntiP``, ``k``, ``dP``, ``dAntiP``, ``dk``, ``lam``, ``fired``,
    ``adjustment``, ``n_pooled``).
    """
    return leave_one_out_experiments(
        collection_or_frames,
        [{"by": by, "runs": runs}],
        cutoffs,
        estimators,
        protocol,
        pooled=pooled,
        depth=depth,
        fraction=fraction,
        alpha=alpha,
        tie=tie,
        indicator=indicator,
        rp=rp,
        decimals=decimals,
        replace=replace,
        pool_policy=pool_policy,
    )[0]


def leave_one_out_experiments(
    collection_or_frames,
    configs: Sequence[dict],
    cutoffs: Sequence[int] = (5, 10, 20, 30, 100),
    estimators: Iterable[str] = ("reduced", "webber", "lipani"),
    protocol: str | None = None,
    *,
    pooled: Iterable[str] | None = None,
    depth: int | None = None,
    fraction: float = 0.75,
    alpha: float | None = None,
    tie: str | None = None,
    indicator: str | None = None,
    rp: str | None = None,
    decimals: int | None = None,
    replace: bool | None = None,
    pool_policy: str | None = None,
    progress: bool | None = False,
) -> list[pd.DataFrame]:
    """:func:`leave_one_out_experiment` for several ``configs`` (dicts with ``by`` and ``runs``)
    that share one encoding of the pooled runs and one merge r_p ∘ r_u of every pair — the merge
    depends on the runs only, not on the leave-out unit or the run subset. Returns one frame
    per config, in order, each as :func:`leave_one_out_experiment` returns it. ``progress``: a
    progress bar over the configurations (:func:`pbtools.grid.progress_bar`; None = auto)."""
    opts = resolve(
        protocol,
        alpha=alpha,
        tie=tie,
        indicator=indicator,
        rp=rp,
        decimals=decimals,
        replace=replace,
        pool_policy=pool_policy,
    )
    for cfg in configs:
        if cfg.get("runs", "all") not in ("all", "top75"):
            raise ValueError(f"runs must be 'all' or 'top75', got {cfg['runs']!r}")
        if cfg.get("by", "org") not in ("org", "run"):
            raise ValueError(f"by must be 'org' or 'run', got {cfg['by']!r}")
    estimators = list(estimators)
    R, Q, O = load(collection_or_frames, protocol=protocol)
    require_columns(O, ("name", "org"), "orgs")
    dec = opts["decimals"]
    pool_names, d = _pool_info(R, Q, pooled, depth, str(opts.get("pool_policy", "lipani2015")))
    name = encode(R["name"])
    in_pool = name.cat.categories.isin(pd.Index(pool_names, dtype="str"))
    S_all = _sorted_runs(R[in_pool[name.cat.codes.to_numpy()]])
    cutoffs = sorted({int(n) for n in cutoffs})
    enc = DenseRuns([S_all])
    slots = enc.slots(0)
    base, _ = enc.label_classes(as_qrels(Q))
    base = base[0]
    blocks_of = {"all": [(cutoffs, slots)]}
    if any(cfg.get("runs", "all") == "top75" for cfg in configs):
        c0 = enc.top_counts(slots, d)
        truth0 = np.where(c0 > 0, base, np.int8(-1))[None]
        sc, _ = _run_scores(enc, slots, np.zeros(len(slots), np.int64), truth0, cutoffs)
        blocks = []
        for j, n in enumerate(cutoffs):
            v = round_half_up(sc[:, j], 4)  # slots are in name order
            order = np.argsort(-v, kind="stable")
            keep = int(np.floor(fraction * len(slots) + 1e-9))
            blocks.append(([n], np.sort(slots[order[:keep]])))
        blocks_of["top75"] = blocks
    cache = (
        _MergeCache(enc, float(opts["alpha"]), str(opts["tie"]), max(cutoffs))
        if "lipani" in estimators
        else None
    )
    from pbtools.grid import progress_bar

    bar = progress_bar(len(configs), progress, "leave-one-out")
    results = []
    for cfg in configs:
        if bar is not None:
            bar.update(1)
        by, runs = cfg.get("by", "org"), cfg.get("runs", "all")
        out = [
            _experiment_block(enc, base, O, block, d, cut, by, estimators, opts, dec, cache)
            for cut, block in blocks_of[runs]
        ]
        res = pd.concat(out, ignore_index=True)
        res.insert(3, "runs", runs)
        results.append(res)
    if bar is not None:
        bar.close()
    return results


class _MergeCache:
    """r_p ∘ r_u for every pair of pooled runs, computed on first use, reused by all blocks."""

    def __init__(self, enc, alpha, tie, depth):
        self.enc, self.alpha, self.tie, self.depth = enc, alpha, tie, depth
        self.M = None

    def __call__(self, pu, pp):
        enc = self.enc
        if self.M is None:
            R = enc.R
            gu, gp = np.meshgrid(np.arange(R), np.arange(R), indexing="ij")
            keep = gu != gp
            pair, t, M = merge_rows(
                enc, gu[keep], gp[keep], alpha=self.alpha, tie=self.tie, depth=self.depth
            )
            self.index = np.full((R, R), -1, dtype=np.int64)
            self.index[gu[keep], gp[keep]] = np.arange(int(keep.sum()))
            self.pair, self.t, self.M = pair, t, M
            self.start = np.searchsorted(pair, np.arange(int(keep.sum()) + 1))
        gi = self.index[pu, pp]
        lens = self.start[gi + 1] - self.start[gi]
        rows = np.repeat(self.start[gi] - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        return np.repeat(np.arange(len(gi)), lens), self.t[rows], self.M[rows]


def _run_scores(enc, slots, var, lab, cutoffs, kind="P"):
    """Run-level P@n, P̄@n (unrounded means over each run's topics): runs × cut-offs."""
    item, t, X = run_rows(enc, slots, max(cutoffs))
    P, A = topic_scores(lab, var[item], t, X, np.asarray(cutoffs), kind)
    return item_means(item, P, len(slots))[0], item_means(item, A, len(slots))[0]


def _experiment_block(enc, base, O, block, d, cutoffs, by, estimators, opts, dec, cache=None):
    names = np.asarray(enc.names)
    bnames = names[block]
    orgs = O.astype({"name": str, "org": str})
    org_of = dict(zip(orgs["name"], orgs["org"], strict=False))
    orgs = orgs[orgs["name"].isin(set(bnames))]
    unit_of = dict(zip(orgs["name"], orgs["org"] if by == "org" else orgs["name"], strict=True))
    evaluated = sorted(unit_of)
    # units of every run of S (runs orgs does not list are their own organisation)
    unit_all = [org_of.get(n, n) if by == "org" else n for n in bnames]
    ulabels = pd.Index(sorted(set(unit_all)), dtype="str")
    ucode = ulabels.get_indexer(pd.Index(unit_all, dtype="str"))
    # contributor table of S: count and the single contributing unit (−1 = several)
    C = enc.top_counts(block, d, groups=ucode, n_groups=len(ulabels))
    n_units = (C > 0).sum(axis=0)
    owner = np.where(n_units == 1, np.argmax(C > 0, axis=0), -1)
    pooled = n_units > 0
    truth = np.where(pooled, base, np.int8(-1))
    eval_units = pd.Index(sorted(set(unit_of.values())), dtype="str")
    ev_code = ulabels.get_indexer(eval_units)
    lab = np.where(
        pooled[None] & (owner[None] != ev_code[:, None, None]), base[None], np.int8(-1)
    ).astype(np.int8)
    u_slots = block[np.searchsorted(bnames, evaluated)]
    u_var = eval_units.get_indexer(pd.Index([unit_of[n] for n in evaluated], dtype="str"))
    if opts["rp"] == "run":
        ok = u_slots[:, None] != block[None, :]
    else:
        un = np.array([unit_of[n] for n in evaluated], dtype=object)
        pn = np.array([unit_of.get(p, f"\0{p}") for p in bnames], dtype=object)
        ok = un[:, None] != pn[None, :]
    pu, pi = np.nonzero(ok)
    est = [e for e in estimators if e != "true"]
    res = _dense_estimate(
        enc,
        block,
        u_slots,
        u_var,
        eval_units,
        lab,
        pu.astype(np.int64),
        block[pi],
        d,
        cutoffs,
        "P",
        0.8,
        est,
        float(opts["alpha"]),
        str(opts["tie"]),
        str(opts["indicator"]),
        dec,
        bool(opts["replace"]),
        merged=cache,
    )
    tP, _ = _run_scores(enc, u_slots, np.zeros(len(u_slots), np.int64), truth[None], cutoffs)
    if dec is not None:
        tP = round_half_up(tP, dec)
    true = pd.DataFrame(
        {
            "name": np.repeat(evaluated, len(cutoffs)),
            "n": np.tile(np.asarray(cutoffs, dtype=np.int64), len(evaluated)),
            "true": tP.ravel(),
        }
    )
    res = res.merge(true, on=["name", "n"], how="left")
    res["left_out"] = res["name"].map(unit_of)
    res = res.rename(columns={"value": "estimate"})
    cols = [
        "name",
        "n",
        "estimator",
        "left_out",
        "true",
        "estimate",
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
    ]
    for c in cols:
        if c not in res.columns:
            res[c] = np.nan
    return res[cols].sort_values(["n", "estimator", "name"], kind="stable").reset_index(drop=True)
