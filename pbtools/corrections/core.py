"""Score estimators for unpooled runs: true, reduced pool, Lipani, Webber & Park, condensed.

Every estimator scores unpooled runs r_u against qrels Q that r_u did not contribute to, using
the pooled runs R_p that built Q. The functional core (:func:`estimate`) scores many unpooled runs
at once — each with its own qrels (a ``left_out`` key) and its own R_p (a pairs frame) — which is
what a leave-one-out experiment needs; :func:`correct` wraps it, and so do the scikit-learn style
classes of :mod:`~pbtools.corrections.estimators` (``TrueScore``, ``ReducedPool``,
``Lipani``, ``WebberOnRuns``, ``Condensed``), which this module re-exports.

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

from pbtools.corrections.rerank import (
    _sorted_runs,
    deltas,
    fires,
    indicators,
    precision_at,
    round_half_up,
    run_means,
)
from pbtools.frames import as_qrels, encode, judge
from pbtools.pooling.dense import (
    DenseRuns,
    _row_chunks,
    item_means,
    merge_rows,
    run_rows,
    topic_scores,
)

__all__ = ["PRESETS", "DEFAULTS", "parse_measure", "resolve", "estimate", "condensed"]

#: principled defaults of every protocol choice
DEFAULTS: dict[str, object] = {
    "rp": "org",
    "tie": "exclusive_first",
    "decimals": None,
    "replace": True,
    "alpha": 1.0,
    "indicator": "lambda",
    "float32": False,
    "run_id": "tag",
}

#: named bundles of choices; ``protocol="lipani2015"`` reproduces Lipani et al. 2015 Table 2
PRESETS: dict[str, dict[str, object]] = {
    "default": dict(DEFAULTS),
    "lipani2015": {
        "rp": "run",
        "tie": "lipani2015",
        "decimals": 4,
        "replace": False,
        "alpha": 1.0,
        "indicator": "lambda",
        "float32": True,
        "run_id": "lipani2015",
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


def _means(judged, cutoffs, keys, kind, p, decimals, values=("P", "AntiP", "k")):
    per = precision_at(
        judged, cutoffs, keys=keys, weights="rbp" if kind == "RBP" else "precision", p=p
    )
    return per, run_means(per, keys=keys, values=values, decimals=decimals)


def estimate(
    pooled: pd.DataFrame,
    unpooled: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    rp_pairs: pd.DataFrame | None = None,
    depth: int = 100,
    measures: Sequence[str] = ("P@10",),
    estimators: Iterable[str] = ("reduced", "lipani", "webber"),
    alpha: float = 1.0,
    tie: str = "exclusive_first",
    indicator: str = "lambda",
    decimals: int | None = None,
    replace: bool = True,
    merged: pd.DataFrame | None = None,
) -> pd.DataFrame:
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
        A precomputed :func:`~.rerank.merge` of (at least) the needed pairs, to depth ≥
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
        res = _estimate_kind(
            pooled,
            unpooled,
            qrels,
            rp_pairs,
            depth,
            cut,
            kind,
            p if p is not None else 0.8,
            estimators,
            alpha,
            tie,
            indicator,
            decimals,
            replace,
            merged,
        )
        names = {n: m for m, n in sel}
        res["measure"] = res["n"].map(names)
        out.append(res.drop(columns="n"))
    res = pd.concat(out, ignore_index=True)
    cols = [
        "name",
        "measure",
        "estimator",
        "value",
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
    return res[cols]


def _estimate_kind(
    pooled,
    unpooled,
    qrels,
    rp_pairs,
    depth,
    cutoffs,
    kind,
    p,
    estimators,
    alpha,
    tie,
    indicator,
    decimals,
    replace,
    merged,
):
    """One measure family of :func:`estimate`: encode densely, then :func:`_dense_estimate`."""
    K = "left_out"
    qrels = _with_key(as_qrels(qrels), K)
    U = _with_key(unpooled, K).copy(deep=False)
    U["name"] = encode(U["name"])
    umap = U[["name", K]].drop_duplicates("name")
    if umap["name"].duplicated().any():
        raise ValueError("an unpooled run is assigned to several qrels blocks")
    u_key = dict(zip(umap["name"].astype(str), umap[K].astype(str), strict=True))
    S = pooled
    enc = DenseRuns([S, U])
    s_slots, u_slots = enc.slots(0), enc.slots(1)
    u_names = enc.names[u_slots]
    if rp_pairs is None:
        pn = list(enc.names[s_slots])
        rp_pairs = pd.DataFrame(
            [(u, q) for u in u_names for q in pn if q != u], columns=["unpooled", "name"]
        )
    rp_pairs = rp_pairs.astype({"unpooled": str, "name": str})
    pu = u_names.get_indexer(pd.Index(rp_pairs["unpooled"], dtype="str"))
    pp = enc.names[s_slots].get_indexer(pd.Index(rp_pairs["name"], dtype="str"))
    ok = (pu >= 0) & (pp >= 0)
    pu, pp = pu[ok].astype(np.int64), s_slots[pp[ok]]
    lab, var_names = enc.label_classes(qrels, K)
    u_var = var_names.get_indexer(pd.Index([u_key[n] for n in u_names], dtype="str"))
    if (u_var < 0).any():  # a qrels block the qrels do not have: nothing is judged
        lab = np.concatenate([lab, np.full((1, *lab.shape[1:]), -1, np.int8)])
        var_names = var_names.append(pd.Index(["\0none"], dtype="str"))
        u_var = np.where(u_var < 0, len(var_names) - 1, u_var)
    res = _dense_estimate(
        enc,
        s_slots,
        u_slots,
        u_var,
        var_names,
        lab,
        pu,
        pp,
        depth,
        cutoffs,
        kind,
        p,
        estimators,
        alpha,
        tie,
        indicator,
        decimals,
        replace,
    )
    if "condensed" in estimators:
        res = pd.concat([res, _condensed(U, qrels, cutoffs, kind, p, decimals)], ignore_index=True)
    return res


def _mean_frame(cols: dict, cutoffs, P, A, decimals, k=None) -> pd.DataFrame:
    """Items × cut-offs means as a long frame (item-major, then n), rounded like run_means."""
    n_items, nc = P.shape
    out = {c: np.repeat(np.asarray(v), nc) for c, v in cols.items()}
    out["n"] = np.tile(np.asarray(cutoffs, dtype=np.int64), n_items)
    out["P"], out["AntiP"] = P.ravel(), A.ravel()
    if decimals is not None:
        out["P"] = round_half_up(out["P"], decimals)
        out["AntiP"] = round_half_up(out["AntiP"], decimals)
        out["k"] = 1.0 - out["P"] - out["AntiP"]
    elif k is not None:
        out["k"] = k.ravel()
    return pd.DataFrame(out)


def _dense_estimate(
    enc,
    s_slots,
    u_slots,
    u_var,
    var_names,
    lab,
    pair_u,
    pair_p,
    depth,
    cutoffs,
    kind,
    p,
    estimators,
    alpha,
    tie,
    indicator,
    decimals,
    replace,
    merged=None,
):
    """The estimators on the dense layout (``pooling.dense``), all runs and pairs at once.

    ``enc``: encoded runs; ``s_slots``: the pooled runs (their top ``depth`` built the pool);
    ``u_slots``: the unpooled runs, ``u_var[i]``: the qrels variant (index into ``lab``, names
    ``var_names``) that unpooled run i is scored on; ``pair_u`` (index into ``u_slots``),
    ``pair_p`` (slot): R_p. ``merged``: optional ``f(u_slots, p_slots) → (pair, t, M)`` giving
    precomputed merges. Returns the rows of ``_estimate_kind``: ``name``, ``n``, ``estimator``,
    ``value`` + indicators.
    """
    N = max(cutoffs)
    cut = np.asarray(cutoffs, dtype=np.int64)
    total = np.ones(len(cut)) if kind == "P" else 1.0 - np.power(p, cut.astype(np.float64))
    names = enc.names
    n_u = len(u_slots)
    order = np.lexsort((pair_p, pair_u))  # pairs by (r_u, r_p in name order)
    pair_u, pair_p = pair_u[order], pair_p[order]
    # the unpooled runs' own scores on their qrels
    item, t, X = run_rows(enc, u_slots, N)
    Pt, At = topic_scores(lab, u_var[item], t, X, cut, kind, p)
    oP, cnt = item_means(item, Pt, n_u)
    oA, _ = item_means(item, At, n_u)
    oK, _ = item_means(item, total[None, :] - Pt - At, n_u)
    has = cnt > 0
    own = _mean_frame(
        {"name": np.asarray(names[u_slots])[has]}, cut, oP[has], oA[has], decimals, oK[has]
    )
    res = []
    if "reduced" in estimators:
        r = own[["name", "n", "P", "AntiP", "k"]].copy()
        r["estimator"], r["value"], r["adjustment"] = "reduced", r["P"], 0.0
        res.append(r)
    need_p = any(e in estimators for e in ("lipani", "webber")) and len(pair_u) > 0
    if need_p:
        # every pooled run of R_p on every qrels variant it is compared under
        combo = u_var[pair_u] * enc.R + pair_p
        uc, pair_item = np.unique(combo, return_inverse=True)
        iv, ip = uc // enc.R, uc % enc.R
        it2, t2, X2 = run_rows(enc, ip, N)
        Pp, Ap = topic_scores(lab, iv[it2], t2, X2, cut, kind, p)
        PM, nT = item_means(it2, Pp, len(uc))
        AM, _ = item_means(it2, Ap, len(uc))
    if "lipani" in estimators:
        if kind != "P":
            raise ValueError("the Lipani estimator is defined for P@n only")
        if need_p:
            res.append(
                _dense_lipani(
                    enc,
                    u_slots,
                    u_var,
                    var_names,
                    lab,
                    pair_u,
                    pair_p,
                    cut,
                    own,
                    iv,
                    ip,
                    PM,
                    AM,
                    nT,
                    alpha,
                    tie,
                    indicator,
                    decimals,
                    merged,
                )
            )
        else:
            res.append(_no_rp(own, "lipani"))
    if "webber" in estimators:
        if need_p:
            res.append(
                _dense_webber(
                    enc,
                    s_slots,
                    u_slots,
                    u_var,
                    lab,
                    pair_u,
                    pair_p,
                    pair_item.ravel(),
                    PM,
                    nT,
                    own,
                    cut,
                    depth,
                    kind,
                    p,
                    decimals,
                    replace,
                )
            )
        else:
            res.append(_no_rp(own, "webber"))
    if not res:
        return own.iloc[:0].assign(estimator="", value=np.nan)
    return pd.concat(res, ignore_index=True)


def _no_rp(own, name):
    r = own[["name", "n", "P", "AntiP", "k"]].copy()
    r["estimator"], r["value"], r["adjustment"], r["n_pooled"] = name, r["P"], 0.0, 0
    return r


def _dense_lipani(
    enc,
    u_slots,
    u_var,
    var_names,
    lab,
    pair_u,
    pair_p,
    cut,
    own,
    iv,
    ip,
    PM,
    AM,
    nT,
    alpha,
    tie,
    indicator,
    decimals,
    merged,
):
    """Lipani Algorithm 1: δ of r' = r_p ∘ r_u against r_p on r_u's qrels, Δ, λ, estimate."""
    N = int(cut.max())
    if merged is None:
        pair, t, M = merge_rows(enc, u_slots[pair_u], pair_p, alpha=alpha, tie=tie, depth=N)
    else:
        pair, t, M = merged(u_slots[pair_u], pair_p)
    Pm, Am = topic_scores(lab, u_var[pair_u][pair], t, M, cut)
    MP, mc = item_means(pair, Pm, len(pair_u))
    MA, _ = item_means(pair, Am, len(pair_u))
    ok = mc > 0  # r' exists on the topics both runs have
    K = "left_out"
    vn, nm = np.asarray(var_names), np.asarray(enc.names)
    mm = _mean_frame(
        {K: vn[u_var[pair_u]][ok], "unpooled": nm[u_slots[pair_u]][ok], "name": nm[pair_p][ok]},
        cut,
        MP[ok],
        MA[ok],
        decimals,
    )
    has = nT > 0
    pm = _mean_frame({K: vn[iv][has], "name": nm[ip][has]}, cut, PM[has], AM[has], decimals)
    d = deltas(mm.drop(columns="k", errors="ignore"), pm, keys=[K])
    ind = indicators(own, d)
    fired = fires(ind, indicator)
    adj = np.where(fired, ind["k"] * np.maximum(ind["dk"], 0.0), 0.0)
    ind["fired"] = fired
    ind["adjustment"] = adj
    ind["value"] = ind["P"] + adj
    ind["estimator"] = "lipani"
    return ind


def _dense_webber(
    enc,
    s_slots,
    u_slots,
    u_var,
    lab,
    pair_u,
    pair_p,
    pair_item,
    PM,
    nT,
    own,
    cut,
    depth,
    kind,
    p,
    decimals,
    replace,
):
    """Webber & Park Algorithm 1 for every (r_u, p ∈ R_p) pair at once.

    term(u, p) = score(p, Q_u) − score(p, Q_u ∩ pool(R_p(u) \\ {p} [∪ {r_u}])): a judged
    document x of Q_u survives the inner re-pool when some run of R_p(u) other than p has it in
    its top d (or, with ``replace``, r_u has). Counted as C(x) − C_X(u)(x) − [ρ_p(x) ≤ d], with
    C the pool's contributor counts and X(u) = pooled runs outside R_p(u) (one count table per
    distinct X). Only relevant documents of p's top n change the score, so the partial score is
    the full one minus their weight (mean over p's topics).
    """
    N = int(cut.max())
    d = int(depth)
    C = enc.top_counts(s_slots, d).astype(np.int16)
    in_rp = np.zeros((len(u_slots), enc.R), dtype=bool)
    in_rp[pair_u, pair_p] = True
    Xs = ~in_rp[:, s_slots]
    gX, ginv = np.unique(Xs, axis=0, return_inverse=True)
    ginv = ginv.ravel()
    gi, si = np.nonzero(gX)
    CX = enc.top_counts(s_slots[si], d, groups=gi, n_groups=len(gX))
    pr, t = np.nonzero(enc.length[pair_p] > 0)
    width = min(N, enc.L)
    loss = np.zeros((len(pair_u), len(cut)))
    pos = np.arange(width)[None, :]
    for sl in _row_chunks(len(pr), width):
        rows, tt = pr[sl], t[sl]
        x = enc.D[pair_p[rows], tt, :width]
        xc = np.maximum(x, 0)
        g = ginv[pair_u[rows]]
        c = C[tt[:, None], xc] - CX[g[:, None], tt[:, None], xc].astype(np.int16) - (pos < d)
        survive = c > 0
        if replace:
            ur = enc.rank(u_slots[pair_u[rows]][:, None], tt[:, None], x)
            survive |= (ur >= 1) & (ur <= d)
        gone = ~survive & (x >= 0)
        Lp, _ = topic_scores(lab, u_var[pair_u[rows]], tt, x, cut, kind, p, gone=gone)
        for j in range(len(cut)):  # ≤ 5 cut-offs
            loss[:, j] += np.bincount(rows, weights=Lp[:, j], minlength=len(pair_u))
    has = nT[pair_item] > 0
    Pfull = PM[pair_item]
    with np.errstate(invalid="ignore", divide="ignore"):
        partial = Pfull - loss / nT[pair_item][:, None]
    full = pd.DataFrame(
        {
            "u": np.repeat(pair_u[has], len(cut)),
            "n": np.tile(cut, int(has.sum())),
            "P": Pfull[has].ravel(),
            "partial": partial[has].ravel(),
        }
    )
    if decimals is not None:
        full["P"] = round_half_up(full["P"].to_numpy(), decimals)
        full["partial"] = round_half_up(full["partial"].to_numpy(), decimals)
    full["term"] = full["P"] - full["partial"]
    a = full.groupby(["u", "n"])["term"].agg(["mean", "size"]).reset_index()
    a["name"] = np.asarray(enc.names[u_slots])[a["u"].to_numpy()]
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


def condensed(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Sequence[str] = ("P@10",),
    decimals: int | None = None,
) -> pd.DataFrame:
    """Condensed-list scores (Sakai 2007/2008; Webber & Park §2): unjudged documents are removed
    and the remaining ones re-ranked before P@n / RBP@n is taken. Biased upward for unpooled
    runs — a baseline. ``runs``: run columns; ``qrels``: qrels (+ optional ``left_out`` key, then
    ``runs`` need the same column). Returns ``name``, ``measure``, ``estimator``, ``value``."""
    return estimate(
        runs.iloc[:0],
        runs,
        qrels,
        measures=measures,
        estimators=("condensed",),
        decimals=decimals,
        rp_pairs=pd.DataFrame(columns=["unpooled", "name"]),
    )
