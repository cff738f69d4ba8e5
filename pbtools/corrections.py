"""Score estimators for unpooled runs: true, reduced pool, Lipani, Webber & Park, condensed.

Every estimator scores unpooled runs r_u against qrels Q that r_u did not contribute to, using
the pooled runs R_p that built Q. The functional core (:func:`estimate`) scores many unpooled runs
at once — each with its own qrels (a ``left_out`` key) and its own R_p (a pairs frame) — which is
what a leave-one-out experiment needs; :func:`correct` and the scikit-learn style classes wrap it.

Estimators (``estimator`` column of the results)
------------------------------------------------
``true``      the run's score when its unit is pooled (PROTOCOL item 14; :func:`correct` with
              ``leave_out``).
``reduced``   P@n(r_u, Q): the score on the reduced qrels, unjudged = non-relevant.
``lipani``    Lipani et al. 2015 Algorithm 1: s + k̄·max(Δk, 0) when the indicator fires, else s
              (so the estimate stays in [P@n, P@n + k̄@n]); P@n only.
``webber``    Webber & Park 2009 Algorithm 1 (inference from systems): u_r + a with
              a = mean_{p ∈ R_p} [score(p, Q) − score(p, Q ∩ pool(R_p \\ {p} ∪ {r_u}))], i.e. with
              their refinement that the new run replaces the withdrawn one (``replace=True``,
              default). ``replace=False`` is the reading Lipani et al. compared against
              (PROTOCOL item 13). P@n and RBP(p=…)@n.
``webber_topics``  Webber & Park Algorithm 2 (inference from fully judged common topics), with
              the §3.2 variance and a seeded bootstrap interval (:func:`webber_common_topics`).
``condensed`` the score of the condensed list (unjudged documents removed; Sakai 2007/2008),
              biased upward — a baseline.

Choices (each a parameter; ``PRESETS["lipani2015"]`` selects the paper-reproducing values)
------------------------------------------------------------------------------------------
=================  ==============================  ==========================================
parameter          default (principled)            ``protocol="lipani2015"``
=================  ==============================  ==========================================
``rp``             ``"org"``: R_p = the runs that    ``"run"``: R_p = every pooled run but r_u
                   built Q (r_u's siblings out)      itself (item 12)
``tie``            ``"exclusive_first"`` (paper)     ``"lipani2015"`` (item 11)
``decimals``       ``None`` (no rounding)           ``4``, half-up, every P@n / P̄@n (item 10)
``replace``        ``True`` (Webber & Park)          ``False`` (item 13)
``float32``        ``False`` (io option)             ``True`` (item 2)
``run_id``         ``"tag"`` (io option)             ``"tag"`` (item 1)
=================  ==============================  ==========================================

Output columns of every estimator: ``name``, ``measure``, ``estimator``, ``value`` and the
indicators/adjustment that produced it: ``P``, ``AntiP``, ``k`` (the run's own P@n, P̄@n, k̄@n on
Q), ``dP``, ``dAntiP``, ``dk`` (ΔP, ΔP̄, Δk), ``lam`` (λ), ``fired`` and ``adjustment`` (value −
reduced score); NaN where not applicable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from pbtools.frames import as_qrels, encode, judge, unify
from pbtools.rerank import (
    _ranges,
    _sorted_runs,
    deltas,
    fires,
    indicators,
    merge,
    precision_at,
    round_half_up,
    run_means,
)

__all__ = [
    "PRESETS",
    "DEFAULTS",
    "parse_measure",
    "estimate",
    "correct",
    "webber_common_topics",
    "condensed",
    "TrueScore",
    "ReducedPool",
    "Lipani",
    "WebberOnRuns",
    "WebberCommonTopics",
    "Condensed",
]

#: principled defaults of every protocol choice
DEFAULTS: dict[str, object] = {
    "rp": "org", "tie": "exclusive_first", "decimals": None, "replace": False, "alpha": 1.0,
    "indicator": "lambda", "float32": False, "run_id": "tag",
}
DEFAULTS["replace"] = True

#: named bundles of choices; ``protocol="lipani2015"`` reproduces Lipani et al. 2015 Table 2
PRESETS: dict[str, dict[str, object]] = {
    "default": dict(DEFAULTS),
    "lipani2015": {
        "rp": "run", "tie": "lipani2015", "decimals": 4, "replace": False, "alpha": 1.0,
        "indicator": "lambda", "float32": True, "run_id": "lipani2015",
        "pool_policy": "lipani2015",
        "skip_malformed": True,
    },
}

_EST_NAMES = ("true", "reduced", "lipani", "webber", "condensed")
_MEASURE = re.compile(r"^(P|RBP)(?:\(p=([0-9.]+)\))?@(\d+)$")


def parse_measure(name: str) -> tuple[str, int, float]:
    """``"P@10"`` → ``("P", 10, nan)``; ``"RBP(p=0.8)@10"`` → ``("RBP", 10, 0.8)``.

    trec_eval's ``P_10`` is accepted. Only the cut-off measures the corrections support.
    """
    s = str(name).strip()
    m = re.match(r"^P_(\d+)$", s)
    if m:
        return "P", int(m.group(1)), float("nan")
    m = _MEASURE.match(s)
    if not m:
        raise ValueError(f"unsupported measure {name!r}: corrections handle P@n and RBP(p=x)@n")
    kind, p, n = m.group(1), m.group(2), int(m.group(3))
    if kind == "RBP":
        return "RBP", n, float(p) if p else 0.8
    return "P", n, float("nan")


def resolve(protocol: str | None = None, **overrides) -> dict[str, object]:
    """The effective choices: ``DEFAULTS`` ← ``PRESETS[protocol]`` ← explicit overrides."""
    out = dict(DEFAULTS)
    if protocol is not None:
        if protocol not in PRESETS:
            raise ValueError(f"unknown protocol {protocol!r}; known: {sorted(PRESETS)}")
        out.update(PRESETS[protocol])
    out.update({k: v for k, v in overrides.items() if v is not None})
    return out


# --------------------------------------------------------------------------------------------
# the vectorised core
# --------------------------------------------------------------------------------------------


def _with_key(df: pd.DataFrame, key: str, value: str = "") -> pd.DataFrame:
    if key in df.columns:
        return df
    out = df.copy(deep=False)
    out[key] = encode(pd.Series([value] * len(df), index=df.index, dtype="str"))
    return out


def _top(runs: pd.DataFrame, n: int) -> pd.DataFrame:
    return runs[runs["rank"].to_numpy() <= n]


def _means(judged, cutoffs, keys, kind, p, decimals, values=("P", "AntiP", "k")):
    per = precision_at(judged, cutoffs, keys=keys, weights="rbp" if kind == "RBP" else
                       "precision", p=p)
    return per, run_means(per, keys=keys, values=values, decimals=decimals)


def estimate(pooled: pd.DataFrame, unpooled: pd.DataFrame, qrels: pd.DataFrame, *,
             rp_pairs: pd.DataFrame | None = None, depth: int = 100,
             measures: Sequence[str] = ("P@10",),
             estimators: Iterable[str] = ("reduced", "lipani", "webber"),
             alpha: float = 1.0, tie: str = "exclusive_first", indicator: str = "lambda",
             decimals: int | None = None, replace: bool = True,
             merged: pd.DataFrame | None = None) -> pd.DataFrame:
    """Score many unpooled runs with several estimators at once (the hot path).

    Parameters
    ----------
    pooled
        The pooled runs (run columns) — every run whose top ``depth`` built the (unreduced) pool.
    unpooled
        The runs to score (run columns) + optional ``left_out`` column naming which qrels block
        each run is scored against (the ``left_out`` key of ``qrels``).
    qrels
        Qrels (``qid``, ``docno``, ``label``) + optional ``left_out`` key (one block per unit,
        :func:`pbtools.pooling.leave_one_out`).
    rp_pairs
        ``unpooled``, ``name``: R_p of every unpooled run (default: all pooled runs whose name
        differs from the unpooled run's).
    depth
        Pool depth d (Webber's inner re-pool uses the top d of the runs).
    replace
        Webber & Park's refinement (the new run replaces the withdrawn one in the inner pool).
    merged
        A precomputed :func:`pbtools.rerank.merge` of (at least) the needed pairs, to depth ≥
        the largest cut-off (an experiment merges once for all its run subsets).
    decimals
        Round every run-level P@n / P̄@n (and Webber's terms) half-up to this many decimals.

    Returns a tidy frame: ``name``, ``measure``, ``estimator``, ``value``, ``P``, ``AntiP``,
    ``k``, ``dP``, ``dAntiP``, ``dk``, ``lam``, ``fired``, ``adjustment``, ``n_pooled``.
    """
    estimators = list(estimators)
    pooled = _sorted_runs(pooled) if len(pooled) else pooled
    unpooled = _sorted_runs(unpooled)
    bad = [e for e in estimators if e not in _EST_NAMES]
    if bad:
        raise ValueError(f"unknown estimator(s) {bad}; known: {_EST_NAMES}")
    parsed = [(m, *parse_measure(m)) for m in measures]
    kinds = {(k, p if k == "RBP" else None) for _, k, _, p in parsed}
    out = []
    for kind, p in sorted(kinds, key=str):
        sel = [(m, n) for m, k, n, pp in parsed if k == kind and (k == "P" or pp == p)]
        cut = sorted({n for _, n in sel})
        res = _estimate_kind(pooled, unpooled, qrels, rp_pairs, depth, cut, kind,
                             p if p is not None else 0.8, estimators, alpha, tie, indicator,
                             decimals, replace, merged)
        names = {n: m for m, n in sel}
        res["measure"] = res["n"].map(names)
        out.append(res.drop(columns="n"))
    res = pd.concat(out, ignore_index=True)
    cols = ["name", "measure", "estimator", "value", "P", "AntiP", "k", "dP", "dAntiP", "dk",
            "lam", "fired", "adjustment", "n_pooled"]
    for c in cols:
        if c not in res.columns:
            res[c] = np.nan
    return res[cols]


def _estimate_kind(pooled, unpooled, qrels, rp_pairs, depth, cutoffs, kind, p, estimators,
                   alpha, tie, indicator, decimals, replace, merged):
    N = max(cutoffs)
    K = "left_out"
    qrels = _with_key(as_qrels(qrels), K)
    U = _with_key(unpooled, K)
    U = U.copy(deep=False)
    U["name"] = encode(U["name"])
    umap = U[["name", K]].drop_duplicates("name")
    if umap["name"].duplicated().any():
        raise ValueError("an unpooled run is assigned to several qrels blocks")
    u_key = dict(zip(umap["name"].astype(str), umap[K].astype(str), strict=True))
    S = pooled
    if rp_pairs is None:
        pn = pd.unique(S["name"].astype(str))
        rp_pairs = pd.DataFrame([(u, q) for u in u_key for q in pn if q != u],
                                columns=["unpooled", "name"])
    rp_pairs = rp_pairs.astype({"unpooled": str, "name": str})
    rp_pairs = rp_pairs[rp_pairs["unpooled"].isin(list(u_key))]

    # the unpooled runs' own scores on their qrels
    uj = judge(_top(U, N), qrels, keys=[K])
    _, own = _means(uj, cutoffs, [K], kind, p, decimals)
    own = own.drop(columns=K)
    own["name"] = own["name"].astype(str)
    res = []
    if "reduced" in estimators:
        r = own[["name", "n", "P", "AntiP", "k"]].copy()
        r["estimator"], r["value"], r["adjustment"] = "reduced", r["P"], 0.0
        res.append(r)
    need_p = any(e in estimators for e in ("lipani", "webber"))
    if need_p and len(rp_pairs):
        keys_used = pd.Index(sorted(set(u_key.values())), dtype="str")
        q_used = qrels[qrels[K].astype(str).isin(keys_used)]
        sp = _top(S, max(N, depth) if "webber" in estimators else N)
        sp = sp[sp["name"].astype(str).isin(pd.unique(rp_pairs["name"]))]
        pj = judge(_top(sp, N), q_used, keys=[K])
        p_per, p_mean = _means(pj, cutoffs, [K], kind, p, decimals)
        p_mean["name"] = p_mean["name"].astype(str)
        p_mean[K] = p_mean[K].astype(str)
        pairs_k = rp_pairs.assign(**{K: rp_pairs["unpooled"].map(u_key)})
    if "lipani" in estimators:
        if kind != "P":
            raise ValueError("the Lipani estimator is defined for P@n only")
        res.append(_lipani(S, U, q_used, pairs_k, p_mean, own, cutoffs, alpha, tie, indicator,
                           decimals, u_key, merged) if len(rp_pairs) else _no_rp(own, "lipani"))
    if "webber" in estimators:
        res.append(_webber(S, U, pj, p_per, pairs_k, own, cutoffs, depth, kind, p, decimals,
                           replace) if len(rp_pairs) else
                   _no_rp(own, "webber"))
    if "condensed" in estimators:
        res.append(_condensed(U, qrels, cutoffs, kind, p, decimals))
    return pd.concat(res, ignore_index=True)


def _select_pairs(merged: pd.DataFrame, pairs: pd.DataFrame, depth: int) -> pd.DataFrame:
    """Rows of a precomputed merge that belong to ``pairs`` (``unpooled``, ``name``)."""
    uc, pc = merged["unpooled"].cat.categories, merged["name"].cat.categories
    iu = uc.get_indexer(pairs["unpooled"].astype(str))
    ip = pc.get_indexer(pairs["name"].astype(str))
    if (iu < 0).any() or (ip < 0).any():
        raise ValueError("the precomputed merge lacks some (unpooled, pooled) pairs")
    want = np.zeros((len(uc), len(pc)), dtype=bool)
    want[iu, ip] = True
    keep = want[merged["unpooled"].cat.codes.to_numpy(), merged["name"].cat.codes.to_numpy()]
    keep &= merged["rank"].to_numpy() <= depth
    return merged[keep].reset_index(drop=True)


def _no_rp(own, name):
    r = own[["name", "n", "P", "AntiP", "k"]].copy()
    r["estimator"], r["value"], r["adjustment"], r["n_pooled"] = name, r["P"], 0.0, 0
    return r


def _lipani(S, U, q_used, pairs_k, p_mean, own, cutoffs, alpha, tie, indicator, decimals,
            u_key, merged=None):
    K = "left_out"
    N = max(cutoffs)
    if merged is None:
        m = merge(S, U, alpha=alpha, tie=tie, depth=N, pairs=pairs_k[["unpooled", "name"]])
    else:
        m = _select_pairs(merged, pairs_k, N)
    m[K] = encode(m["unpooled"].map(u_key).astype(str))
    mj = judge(m, q_used, keys=[K])
    _, mm = _means(mj, cutoffs, [K, "unpooled"], "P", 0.8, decimals)
    mm["name"] = mm["name"].astype(str)
    mm["unpooled"] = mm["unpooled"].astype(str)
    mm[K] = mm[K].astype(str)
    d = deltas(mm, p_mean, keys=[K])
    ind = indicators(own, d)
    fired = fires(ind, indicator)
    adj = np.where(fired, ind["k"] * np.maximum(ind["dk"], 0.0), 0.0)
    ind["fired"] = fired
    ind["adjustment"] = adj
    ind["value"] = ind["P"] + adj
    ind["estimator"] = "lipani"
    return ind


def _lookup(keys_sorted: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Index of each query in a sorted unique key array, −1 when absent."""
    if len(keys_sorted) == 0:
        return np.full(len(query), -1, dtype=np.int64)
    pos = np.searchsorted(keys_sorted, query)
    pos_c = np.minimum(pos, len(keys_sorted) - 1)
    return np.where(keys_sorted[pos_c] == query, pos_c, -1)


def _webber(S, U, pj, p_per, pairs_k, own, cutoffs, depth, kind, p, decimals, replace):
    """Webber & Park Algorithm 1 for every (r_u, p ∈ R_p) pair at once.

    term(u, p) = score(p, Q_u) − score(p, Q_u ∩ pool(R_p(u) \\ {p} [∪ {r_u}])): a judged
    document x of Q_u survives the inner re-pool when some run of R_p(u) other than p has it in
    its top d (or, with ``replace``, r_u has). Only relevant documents of p's top n change the
    score, so the partial score is the full one minus their weight (mean over p's topics).
    """
    K = "left_out"
    top_d = _top(S, depth)
    tu = U[U["rank"].to_numpy() <= depth]
    q3 = unify(top_d["qid"], pj["qid"], tu["qid"])
    d3 = unify(top_d["docno"], pj["docno"], tu["docno"])
    n3 = unify(top_d["name"], pj["name"], tu["name"],
               encode(pairs_k["unpooled"]), encode(pairs_k["name"]))
    nd = len(d3[0].cat.categories)
    ntx = len(q3[0].cat.categories) * nd
    nr = len(n3[0].cat.categories)

    def cd(x):
        return x.cat.codes.to_numpy().astype(np.int64)

    s_tx = cd(q3[0]) * nd + cd(d3[0])
    s_run = cd(n3[0])
    uniq_tx, n_all = np.unique(s_tx, return_counts=True)
    pu, pp = cd(n3[3]), cd(n3[4])
    # the pool's runs outside R_p(u) (r_u itself, its unit): their top d does not count
    s_names = np.unique(s_run)
    in_rp = np.zeros((nr, nr), dtype=bool)
    in_rp[pu, pp] = True
    us = np.unique(pu)
    ex_u, ex_s = np.nonzero(~in_rp[us][:, s_names])
    ex_u, ex_s = us[ex_u], s_names[ex_s]
    order = np.argsort(s_run, kind="stable")
    starts = np.searchsorted(s_run[order], np.arange(nr))
    lens = np.searchsorted(s_run[order], np.arange(nr), side="right") - starts
    idx = order[_ranges(starts[ex_s], lens[ex_s])]
    ex_key, ex_cnt = np.unique(np.repeat(ex_u, lens[ex_s]) * ntx + s_tx[idx],
                               return_counts=True)
    # relevant rows of the pooled runs' top N under each qrels block, expanded to pairs
    lab = pj["label"].to_numpy(dtype=np.float64, na_value=-1.0)
    relm = lab > 0
    rows = pd.DataFrame({K: pj[K].cat.codes.to_numpy()[relm], "p": cd(n3[1])[relm],
                         "tx": (cd(q3[1]) * nd + cd(d3[1]))[relm],
                         "rank": pj["rank"].to_numpy()[relm]})
    kc = pd.Categorical(pairs_k[K].astype(str), categories=pj[K].cat.categories).codes
    pk = pd.DataFrame({"u": pu, "p": pp, K: kc})
    rows = pk.merge(rows, on=[K, "p"], how="inner")
    ru, rtx, rr = rows["u"].to_numpy(), rows["tx"].to_numpy(), rows["rank"].to_numpy()
    i = _lookup(uniq_tx, rtx)
    cnt = np.where(i >= 0, n_all[np.maximum(i, 0)], 0) if len(n_all) else np.zeros(len(rtx))
    j = _lookup(ex_key, ru * ntx + rtx)
    if len(ex_cnt):
        cnt = cnt - np.where(j >= 0, ex_cnt[np.maximum(j, 0)], 0)
    survive = (cnt - (rr <= depth)) > 0
    if replace:
        u_key = np.unique(cd(n3[2]) * ntx + cd(q3[2]) * nd + cd(d3[2]))
        survive |= _lookup(u_key, ru * ntx + rtx) >= 0
    gone = ~survive
    gu, gp, gr = ru[gone], rows["p"].to_numpy()[gone], rr[gone]
    # run-level score of p on Q_u (unrounded) and its number of topics
    pm = run_means(p_per, keys=[K], values=("P",))
    first = p_per[p_per["n"].to_numpy() == p_per["n"].iloc[0]]
    nt = first.groupby([K, "name"], observed=True).size().rename("topics").reset_index()
    pm = pm.merge(nt, on=[K, "name"])
    pm[K] = pd.Categorical(pm[K].astype(str), categories=pj[K].cat.categories).codes
    pm["p"] = pd.Categorical(pm["name"].astype(str), categories=n3[0].cat.categories).codes
    parts = []
    for n in cutoffs:
        w = (gr <= n) * ((1 - p) * np.power(p, gr - 1.0) if kind == "RBP" else 1.0 / n)
        parts.append(pd.DataFrame({"u": gu, "p": gp, "n": n, "loss": w}))
    loss = pd.concat(parts, ignore_index=True).groupby(["u", "p", "n"])["loss"].sum()
    full = pk.merge(pm[[K, "p", "n", "P", "topics"]], on=[K, "p"], how="inner")
    full = full.merge(loss.reset_index(), on=["u", "p", "n"], how="left")
    full["partial"] = full["P"] - full["loss"].fillna(0.0) / full["topics"]
    if decimals is not None:
        full["P"] = round_half_up(full["P"].to_numpy(), decimals)
        full["partial"] = round_half_up(full["partial"].to_numpy(), decimals)
    full["term"] = full["P"] - full["partial"]
    a = full.groupby(["u", "n"])["term"].agg(["mean", "size"]).reset_index()
    a["name"] = np.asarray(n3[0].cat.categories)[a["u"].to_numpy()]
    a = a.rename(columns={"mean": "adjustment", "size": "n_pooled"}).drop(columns="u")
    out = own[["name", "n", "P", "AntiP", "k"]].merge(a, on=["name", "n"], how="left")
    out["adjustment"] = out["adjustment"].fillna(0.0)
    out["value"] = out["P"] + out["adjustment"]
    out["estimator"] = "webber"
    return out


def _condensed(U, qrels, cutoffs, kind, p, decimals):
    """Condensed-list score: unjudged documents removed before ranks are taken (Sakai 2008)."""
    K = "left_out"
    j = judge(U, qrels, keys=[K])
    j = j[~j["label"].isna().to_numpy()].copy()
    from pbtools.frames import group_starts, ranks_from_starts
    g = [j[c].cat.codes.to_numpy() for c in (K, "name", "qid")]
    j["rank"] = ranks_from_starts(group_starts(*g))
    _, m = _means(j, cutoffs, [K], kind, p, decimals)
    m = m.drop(columns=K)
    m["name"] = m["name"].astype(str)
    m["estimator"], m["value"] = "condensed", m["P"]
    return m


def condensed(runs: pd.DataFrame, qrels: pd.DataFrame, measures: Sequence[str] = ("P@10",),
              decimals: int | None = None) -> pd.DataFrame:
    """Condensed-list scores (Sakai 2007/2008; Webber & Park §2): unjudged documents are removed
    and the remaining ones re-ranked before P@n / RBP@n is taken. Biased upward for unpooled
    runs — a baseline. ``runs``: run columns; ``qrels``: qrels (+ optional ``left_out`` key, then
    ``runs`` need the same column). Returns ``name``, ``measure``, ``estimator``, ``value``."""
    return estimate(runs.iloc[:0], runs, qrels, measures=measures, estimators=("condensed",),
                    decimals=decimals, rp_pairs=pd.DataFrame(columns=["unpooled", "name"]))


def correct(qrels: pd.DataFrame, pooled_runs: pd.DataFrame, new_run: pd.DataFrame,
            orgs: pd.DataFrame | None = None, measures: Sequence[str] = ("P@10",),
            leave_out: str | None = None,
            estimators: Iterable[str] = ("reduced", "webber", "lipani"),
            protocol: str | None = None, depth: int | None = None, **choices) -> pd.DataFrame:
    """Correct the score of one or more new runs for pool bias (the CLI's entry point).

    ``qrels``: qrels; ``pooled_runs``: the runs that built the pool (run columns); ``new_run``:
    the run(s) to score (run columns); ``orgs``: ``name``, ``org`` (needed for
    ``leave_out="org"``). ``depth``: the pool depth d (default: inferred with
    :func:`pbtools.inference.infer_pool`).

    ``leave_out=None``: the new runs are unpooled; R_p = all pooled runs, Q = ``qrels``.
    ``leave_out="run"``/``"org"``: a new run that is in the pool is first withdrawn — its run or
    organisation is removed from the pool (reduced qrels = re-pool without the unit) — and the
    ``true`` score (on the re-pooled qrels) is reported too; R_p follows the ``rp`` choice.

    Choices (``alpha``, ``tie``, ``indicator``, ``rp``, ``decimals``, ``replace``) default to the
    principled values; ``protocol="lipani2015"`` selects the paper's (``PRESETS``).
    Returns ``name``, ``measure``, ``estimator`` (``true``, ``reduced``, ``webber``, ``lipani``,
    ``condensed``), ``value`` + indicators (see :func:`estimate`).
    """
    from pbtools.pooling import leave_one_out, repool

    opts = resolve(protocol, **choices)
    estimators = list(estimators)
    S = _sorted_runs(pooled_runs)
    new = _sorted_runs(new_run).copy(deep=False)
    new["name"] = encode(new["name"].astype(str))
    if depth is None:
        from pbtools.inference import infer_pool
        depth = infer_pool(S, qrels, policy=str(opts.get("pool_policy", "lipani2015"))).depth
    s_names = list(pd.unique(S["name"].astype(str)))
    n_names = list(pd.unique(new["name"].astype(str)))
    extra = []
    if leave_out is None:
        rp = pd.DataFrame([(u, q) for u in n_names for q in s_names if q != u],
                          columns=["unpooled", "name"])
        res = estimate(S, new, qrels, rp_pairs=rp, depth=depth, measures=measures,
                       estimators=[e for e in estimators if e != "true"],
                       alpha=float(opts["alpha"]), tie=str(opts["tie"]),
                       indicator=str(opts["indicator"]), decimals=opts["decimals"],
                       replace=bool(opts["replace"]))
        return res
    if leave_out not in ("run", "org"):
        raise ValueError(f"leave_out must be None, 'run' or 'org', got {leave_out!r}")
    if leave_out == "org" and orgs is None:
        raise ValueError("leave_out='org' needs orgs (name, org)")
    org_of = {} if orgs is None else dict(zip(orgs["name"].astype(str),
                                              orgs["org"].astype(str), strict=True))
    unit = {n: (org_of.get(n, n) if leave_out == "org" else n) for n in set(s_names + n_names)}
    reduced = leave_one_out(qrels, S, depth, by=leave_out,
                            orgs=orgs if leave_out == "org" else None,
                            units=sorted({unit[n] for n in n_names}), repool=True)
    new["left_out"] = encode(new["name"].astype(str).map(unit))
    if opts["rp"] == "run":
        rp = [(u, q) for u in n_names for q in s_names if q != u]
    else:
        rp = [(u, q) for u in n_names for q in s_names if unit[q] != unit[u]]
    rp = pd.DataFrame(rp, columns=["unpooled", "name"])
    res = estimate(S, new, reduced, rp_pairs=rp, depth=depth, measures=measures,
                   estimators=[e for e in estimators if e != "true"],
                   alpha=float(opts["alpha"]), tie=str(opts["tie"]),
                   indicator=str(opts["indicator"]), decimals=opts["decimals"],
                   replace=bool(opts["replace"]))
    if "true" in estimators:
        truth = repool(qrels, S, depth)
        t = estimate(S, new.drop(columns="left_out"), truth, measures=measures,
                     estimators=("reduced",), decimals=opts["decimals"],
                     rp_pairs=pd.DataFrame(columns=["unpooled", "name"]))
        t["estimator"] = "true"
        extra.append(t)
    return pd.concat([*extra, res], ignore_index=True)


# --------------------------------------------------------------------------------------------
# scikit-learn style estimators
# --------------------------------------------------------------------------------------------


class _Base:
    """fit(qrels, runs, orgs) stores the pool; score(run_or_runs) returns the tidy frame."""

    _estimator = ""

    def __init__(self, measures: Sequence[str] = ("P@10",), protocol: str | None = None,
                 depth: int | None = None):
        self.measures = measures
        self.protocol = protocol
        self.depth = depth

    def get_params(self, deep: bool = True) -> dict[str, object]:
        """The constructor parameters (scikit-learn protocol)."""
        import inspect
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names}

    def _choices(self) -> dict[str, object]:
        return {}

    def fit(self, qrels: pd.DataFrame, runs: pd.DataFrame, orgs: pd.DataFrame | None = None):
        """Remember the qrels, the pooled runs and the run → organisation map; infer d."""
        self.qrels_, self.runs_, self.orgs_ = as_qrels(qrels), _sorted_runs(runs), orgs
        if self.depth is None:
            from pbtools.inference import infer_pool
            self.depth_ = infer_pool(runs, qrels).depth
        else:
            self.depth_ = int(self.depth)
        return self

    def score(self, run_or_runs: pd.DataFrame, leave_out: str | None = None) -> pd.DataFrame:
        """Score unpooled run(s) (run columns); ``leave_out`` as in :func:`correct`."""
        if not hasattr(self, "qrels_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit() first")
        est = ("reduced",) if self._estimator == "true" and leave_out is None else \
            (self._estimator,)
        res = correct(self.qrels_, self.runs_, run_or_runs, orgs=self.orgs_,
                      measures=self.measures, leave_out=leave_out, estimators=est,
                      protocol=self.protocol, depth=self.depth_, **self._choices())
        if self._estimator == "true" and leave_out is None:
            res["estimator"] = "true"
        return res.reset_index(drop=True)


class TrueScore(_Base):
    """The run's score with its unit pooled: on the re-pooled qrels (PROTOCOL item 14)."""

    _estimator = "true"

    def score(self, run_or_runs: pd.DataFrame, leave_out: str | None = None) -> pd.DataFrame:
        from pbtools.pooling import repool
        if not hasattr(self, "qrels_"):
            raise RuntimeError("TrueScore is not fitted; call fit() first")
        truth = repool(self.qrels_, self.runs_, self.depth_)
        res = estimate(self.runs_.iloc[:0], _sorted_runs(run_or_runs), truth,
                       measures=self.measures,
                       estimators=("reduced",), decimals=resolve(self.protocol)["decimals"],
                       rp_pairs=pd.DataFrame(columns=["unpooled", "name"]))
        res["estimator"] = "true"
        return res


class ReducedPool(_Base):
    """P@n on the (reduced) qrels, unjudged documents counted non-relevant."""

    _estimator = "reduced"


class Condensed(_Base):
    """The condensed-list score (unjudged documents removed; Sakai 2008) — upward biased."""

    _estimator = "condensed"


class Lipani(_Base):
    """Lipani et al. 2015 Algorithm 1: s + k̄·max(Δk, 0) when the indicator fires.

    ``alpha`` (merge weight, paper: 1), ``indicator`` (``"lambda"``, ``"dP"``, ``"dAntiP"``,
    ``"always"``), ``tie`` (``"exclusive_first"`` default / ``"lipani2015"``), ``rp``
    (``"org"`` default / ``"run"``), ``decimals`` (None / 4); ``protocol`` fills unset ones.
    """

    _estimator = "lipani"

    def __init__(self, alpha: float = 1.0, indicator: str = "lambda",
                 measures: Sequence[str] = ("P@10",), tie: str | None = None,
                 rp: str | None = None, decimals: int | None = None,
                 protocol: str | None = None, depth: int | None = None):
        super().__init__(measures, protocol, depth)
        self.alpha, self.indicator, self.tie, self.rp, self.decimals = \
            alpha, indicator, tie, rp, decimals

    def _choices(self):
        return {"alpha": self.alpha, "indicator": self.indicator, "tie": self.tie,
                "rp": self.rp, "decimals": self.decimals}


class WebberOnRuns(_Base):
    """Webber & Park 2009 Algorithm 1 (inference from pooled systems), P@n and RBP(p=…)@n.

    ``replace=True`` (default): the new run replaces the withdrawn pooled run in the inner pool
    (their refinement); ``replace=False`` with ``rp="run"`` and ``decimals=4`` is the reading
    compared in Lipani et al. 2015 (PROTOCOL item 13, ``protocol="lipani2015"``).
    """

    _estimator = "webber"

    def __init__(self, replace: bool | None = None, measures: Sequence[str] = ("P@10",),
                 rp: str | None = None, decimals: int | None = None,
                 protocol: str | None = None, depth: int | None = None):
        super().__init__(measures, protocol, depth)
        self.replace, self.rp, self.decimals = replace, rp, decimals

    def _choices(self):
        return {"replace": self.replace, "rp": self.rp, "decimals": self.decimals}


from pbtools.webber import WebberCommonTopics, webber_common_topics  # noqa: E402  (re-export)
