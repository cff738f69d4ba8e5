"""Estimators for sampled pools: infAP, xinfAP, infNDCG, inferred precision and statAP.

A *sampled pool* judges a random sample of a *universe* of documents (e.g. the depth-100 pool)
instead of all of it. Its qrels list every document of the universe: the sampled ones with
their label, the others with label −1 ("pooled but unjudged"); for a stratified sample each row
also names its ``stratum``. Per topic t and stratum s the qrels give N_s (documents of the
stratum), n_s (sampled: label ≥ 0) and r_s (sampled relevant), hence the inclusion probability
π_s = n_s / N_s of every document of the stratum (what :mod:`pbtools.pooling.sampled` records as
``prob``) and the Horvitz-Thompson estimate of the number of relevant documents

    R̂ = Σ_s r_s · N_s / n_s        (strata with n_s > 0; ``infNumRel``)

=================  =============================================================================
measure            per-topic value (k: 1-based rank in trec order, ranks ≤ ``max_rank``)
=================  =============================================================================
``infAP``          trec_eval's ``m_infap.c`` (Yilmaz & Aslam 2006), a kernel of the one engine:
                   (1/R) Σ_{judged rel at k} [1/k + ((k−1)/k) · (p/(k−1)) · (r + ε)/(r + q + 2ε)]
                   with, above k, r judged relevant, q judged non-relevant, p pooled documents
                   (r + q + those with label −1); the first rank adds 1; ε = 1e-5; R judged
                   relevant in the qrels. Documents outside the qrels are skipped.
``xinfAP``         sample_eval.pl's infAP (Yilmaz, Kanoulas & Aslam 2008, §3):
                   (1/R̂) Σ_{sampled rel d at k} (N_s(d)/n_s(d)) · (1 + Ĉ(k−1)) / k, with
                   Ĉ(k) = Σ_s D_s(k) · (c_s(k) + 1e-5) / (m_s(k) + 3e-5) the estimated relevant
                   documents in the top k, D_s, m_s, c_s the universe, sampled and sampled
                   relevant documents of stratum s within the top k
``infNDCG``        Σ_s (D_s / m_s) · Σ_{sampled rel d in s} g_d / log2(k + 1), over the ranking's
                   D_s, m_s, divided by the ideal DCG of round(R̂_g) documents of each grade g
                   (R̂_g the estimate of R̂ restricted to grade g; ideal ranks stop at
                   ``max_rank``, as sample_eval.pl's loop does)
``infP@n``         Ĉ(n) / n (Ĉ at the last rank when the ranking is shorter)
``infIPrec@x``     the interpolated precision at recall x = 0, 0.1, …, 1 of the estimated curve
                   Ĉ(k) / k against x · R̂, walked as sample_eval.pl walks it
                   (:mod:`~.sampled_iprec`)
``infNumRelRet``   Ĉ at the last rank; ``infNumRel`` R̂ (both summed over topics)
``statAP``         Aslam, Pavlu & Yilmaz 2006, the Horvitz-Thompson ratio estimator:
                   (1/R̂) Σ_{sampled rel d at k} (1/k) [1/π_d + Σ_{sampled rel d' above d} 1/π_dd'],
                   π_dd' = π_d π_d' in different strata and n(n−1) / (N(N−1)) in the same one
                   (sampling without replacement within a stratum): numerator and denominator
                   are unbiased for Σ_{rel d} P@k_d and R
=================  =============================================================================

sample_eval.pl's conventions are kept: ties by docno descending, only the first ``max_rank``
(1000) documents, the within-stratum smoothing (+1e-5, +3e-5), the rounding of the ideal
grade counts; a document outside the universe counts as non-relevant. Its averages (the ``all``
line) are trec_eval's: means over the topics a run answers that the qrels hold, except the
summed counts. Golden values: ``tests/measures/test_sampled.py``
(``../shared/data/sample_eval``, 1e-4).

References
----------
Yilmaz & Aslam, "Estimating average precision with incomplete and imperfect judgments", CIKM
2006. Yilmaz, Kanoulas & Aslam, "A simple and efficient sampling method for estimating AP and
NDCG", SIGIR 2008. Aslam, Pavlu & Yilmaz, "A statistical method for system evaluation using
incomplete judgments", SIGIR 2006.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.frames import group_starts, judge, ranked, require_columns
from pbtools.ids import codes, encode
from pbtools.measures import kernels as K
from pbtools.measures.evaluate import QRELS_SCORERS, aggregate, evaluate
from pbtools.measures.formulas import safe_div
from pbtools.measures.names import parse_all
from pbtools.measures.registry import family
from pbtools.measures.sampled_iprec import interpolated_precision, level_index
from pbtools.measures.topics import topics_mode

__all__ = [
    "SAMPLED",
    "SAFE",
    "evaluate_sampled",
    "stratum_counts",
    "plain_measures",
    "INFAP_EPSILON",
]

INFAP_EPSILON = 1e-5  # trec_eval.h
_EPS_REL, _EPS_SAMPLED = 1e-5, 3e-5  # sample_eval.pl's smoothing of c_s / m_s
#: the measures that need a sampled qrels (with strata); infAP is an ordinary engine measure
SAMPLED = ("xinfAP", "infNDCG", "infP", "infIPrec", "infNumRelRet", "infNumRel", "statAP")
#: the other measures that read a sampled qrels as meant: trec_eval's infAP (label −1: pooled,
#: not sampled) and the documents retrieved
SAFE = ("infAP", "NumRet")


# --------------------------------------------------------------------------------------------
# infAP: a kernel of the scoring engine
# --------------------------------------------------------------------------------------------


def _infap(v: K.View, topics: K.Topics, gt, m):
    """trec_eval's infAP (``m_infap.c``), term by term in its floating-point order."""
    rel = v.rel(m.rel)
    r = (v.cum(rel) - rel)[rel].astype(np.float64)  # judged relevant above
    q = (v.cum(v.nonrel(m.rel)))[rel].astype(np.float64)  # judged non-relevant above
    p = v.cum(v.label == K.POOLED)[rel].astype(np.float64)  # pooled, unjudged above
    fj = v.r[rel].astype(np.float64) - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r + q + p) / fj) * (
            (r + INFAP_EPSILON) / (r + q + 2 * INFAP_EPSILON)
        )
    term[fj == 0] = 1.0
    w = v.zeros()
    w[rel] = term
    return safe_div(v.upto(w, None), topics.num_rel(m.rel)[gt]), None


def _needs_strata(v, topics, gt, m):
    raise InputError(
        f"{m} is estimated from a sampled pool: score it with "
        "pbtools.measures.sampled.evaluate_sampled on qrels with a stratum column "
        "(pbtools.io.read_sampled_qrels)"
    )


family(
    "infAP",
    _infap,
    cutoff="none",
    params=("rel",),
    trec=("infAP",),
    citation="Yilmaz & Aslam, CIKM 2006; trec_eval m_infap.c",
)

# the stratified estimators are computed by evaluate_sampled (they need the strata); their
# families declare the names, parameters, averaging and formulas (module docstring)
_YKA = "Yilmaz, Kanoulas & Aslam, SIGIR 2008; NIST sample_eval.pl"
for _base, _cut, _agg, _at, _formula, _cite in (
    ("xinfAP", "none", "mean", None, "(1/R̂) Σ_{sampled rel d at k} (N_s/n_s)(1 + Ĉ(k−1))/k", _YKA),
    ("infNDCG", "none", "mean", None, "Σ_s (D_s/m_s) Σ_{rel d} g_d/log2(k+1) / ideal", _YKA),
    ("infP", "required", "mean", None, "Ĉ(n)/n, Ĉ(n) the estimated relevant in the top n", _YKA),
    ("infIPrec", "none", "mean", "recall", "interpolated Ĉ(k)/k at recall x·R̂", _YKA),
    ("infNumRelRet", "none", "sum", None, "Ĉ at the last rank", _YKA),
    ("infNumRel", "none", "sum", None, "R̂, the estimated number of relevant documents", _YKA),
    (
        "statAP",
        "none",
        "mean",
        None,
        "(1/R̂) Σ_{sampled rel d at k} (1/k)[1/π_d + Σ_{sampled rel d' above d} 1/π_dd']",
        "Aslam, Pavlu & Yilmaz, SIGIR 2006",
    ),
):
    family(
        _base,
        _needs_strata,
        cutoff=_cut,
        params=("rel", "recall") if _at else ("rel",),
        aggregate=_agg,
        at=_at,
        formula=_formula,
        citation=_cite,
    )


# --------------------------------------------------------------------------------------------
# the stratified estimators
# --------------------------------------------------------------------------------------------


def stratum_counts(qrels: pd.DataFrame, rel: int = 1) -> pd.DataFrame:
    """Per topic and stratum: ``N`` documents, ``n`` sampled, ``r`` sampled relevant, ``prob``.

    ``qrels``: ``qid``, ``docno``, ``label`` (−1: in the universe, not sampled), ``stratum``.
    ``prob`` = n / N is the inclusion probability of the stratum's documents.

    Examples
    --------
    >>> q = pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": [1, 0, -1, 1],
    ...                   "stratum": [1, 1, 2, 2]})
    >>> stratum_counts(q)
      qid stratum  N  n  r  prob
    0   1       1  2  2  1   1.0
    1   1       2  2  1  1   0.5
    """
    require_columns(qrels, ("qid", "docno", "label", "stratum"), "sampled qrels")
    lab = qrels["label"].to_numpy(dtype=np.int64)
    df = pd.DataFrame(
        {
            "qid": qrels["qid"].astype(str).to_numpy(),
            "stratum": qrels["stratum"].astype(str).to_numpy(),
            "N": 1,
            "n": (lab >= 0).astype(np.int64),
            "r": (lab >= rel).astype(np.int64),
        }
    )
    out = df.groupby(["qid", "stratum"], sort=True).sum().reset_index()
    out["prob"] = out["n"] / out["N"]
    return out


class _Strata:
    """The qrels' per-(topic, stratum) arrays: N, n, r and sampled relevant per grade."""

    def __init__(self, qrels: pd.DataFrame, rel: int):
        require_columns(qrels, ("qid", "docno", "label", "stratum"), "sampled qrels")
        self.qids = pd.Index(sorted(qrels["qid"].astype(str).unique()), dtype="str")
        t = self.qids.get_indexer(qrels["qid"].astype(str))
        self.s, self.cats = pd.factorize(qrels["stratum"].astype(str), sort=True)
        T, S = len(self.qids), max(len(self.cats), 1)
        lab = qrels["label"].to_numpy(dtype=np.int64)
        cell = t * S + self.s
        self.N = np.bincount(cell, minlength=T * S).reshape(T, S).astype(np.float64)
        self.n = np.bincount(cell[lab >= 0], minlength=T * S).reshape(T, S).astype(np.float64)
        self.r = np.bincount(cell[lab >= rel], minlength=T * S).reshape(T, S).astype(np.float64)
        width = int(max(lab.max(initial=0), rel)) + 1
        hit = lab >= rel
        self.grade = np.bincount(cell[hit] * width + lab[hit], minlength=T * S * width).reshape(
            T, S, width
        )
        self.inv_pi = safe_div(self.N, self.n)  # 1 / π_s (0 where nothing was sampled)
        self.R = (self.r * self.inv_pi).sum(axis=1)  # R̂ per topic
        self.T, self.S, self.rel = T, S, rel

    def ideal_dcg(self, max_rank: int) -> np.ndarray:
        """Per topic: the DCG of round(R̂_g) documents of each grade g, best grades first."""
        est = (self.grade * self.inv_pi[:, :, None]).sum(axis=1)[:, ::-1]  # grades descending
        gains = np.arange(est.shape[1] - 1, -1, -1, dtype=np.float64)
        c = np.floor(est + 0.5).astype(np.int64)
        lo = np.cumsum(c, axis=1) - c
        hi = np.where(lo + 1 <= max_rank, np.minimum(lo + c, max_rank), lo + 1)
        hi = np.where(c > 0, hi, lo)
        top = int(hi.max(initial=0))
        harm = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, top + 2.0)))])
        return ((harm[hi] - harm[lo]) * gains[None, :]).sum(axis=1)


def _running(x: np.ndarray, start: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Inclusive running sums of the rows of ``x`` (rows × S) inside each group."""
    cs = np.cumsum(x, axis=0, dtype=x.dtype)
    base = cs[start] - x[start]
    return cs - base[g]


def _rows(runs: pd.DataFrame, qrels: pd.DataFrame, st: _Strata, max_rank: int):
    """The ranked rows of every (run, topic) the qrels hold, cut at ``max_rank``: the rows,
    their label (−1: not sampled or outside the universe), stratum code (−1: outside), topic,
    group and the first row of every group."""
    if "name" not in runs.columns:
        runs = runs.assign(name="run")
    runs = ranked(runs)
    qid = encode(runs["qid"])
    t_all = st.qids.get_indexer(qid.cat.categories.astype(str))[qid.cat.codes.to_numpy()]
    keep = (t_all >= 0) & (runs["rank"].to_numpy() <= max_rank)
    runs = runs.loc[keep].reset_index(drop=True)
    base = qrels[["qid", "docno", "label"]]
    label = judge(runs, base, keys=[])["label"].to_numpy(dtype=np.int64, na_value=-1)
    scode = base.assign(label=st.s.astype(np.int16))
    s = judge(runs, scode, keys=[])["label"].to_numpy(dtype=np.int64, na_value=-1)
    t = t_all[keep]
    start = group_starts(codes(runs["name"]), t)
    return runs, label, s, t, np.cumsum(start) - 1, np.flatnonzero(start)


def _estimate(runs, qrels, ms, max_rank: int, all_topics: bool) -> pd.DataFrame:
    """Per-topic values of the sampled measures ``ms`` (all with one ``rel``); with
    ``all_topics`` (trec_eval ``-c``) every qrels topic a run lacks too: 0, R̂ for infNumRel."""
    rel = ms[0].rel
    st = _Strata(qrels, rel)
    names = pd.unique(runs["name"].astype(str)) if "name" in runs.columns else np.array(["run"])
    runs, lab, s, t, g, first = _rows(runs, qrels, st, max_rank)
    G, S = len(first), st.S
    k = runs["rank"].to_numpy().astype(np.float64)
    univ = s >= 0
    samp = univ & (lab >= 0)
    relv = univ & (lab >= rel)
    rows = np.arange(len(s))
    onehot = np.zeros((len(s), S), dtype=np.int32)  # counts within a ranking
    D, M, C = onehot.copy(), onehot.copy(), onehot
    D[rows[univ], s[univ]] = 1
    M[rows[samp], s[samp]] = 1
    C[rows[relv], s[relv]] = 1
    Dc, Mc, Cc = (_running(x, first, g) for x in (D, M, C))

    def chat(d, m_, c):  # Ĉ: estimated relevant documents among the rows counted
        return (d * ((c + _EPS_REL) / (m_ + _EPS_SAMPLED))).sum(axis=1)

    last = np.r_[first[1:], len(s)] - 1 if G else first
    length = (last - first + 1).astype(np.int64)
    gt = t[first] if G else t
    inv = st.inv_pi[t[relv], s[relv]]  # 1 / π of each sampled relevant row
    kr = k[relv]
    out, curve = {}, None
    for m in ms:
        if m.base == "xinfAP":
            prec = (1.0 + chat(Dc - D, Mc - M, Cc - C)[relv]) / kr
            num = np.bincount(g[relv], prec * inv, minlength=G)
            val = safe_div(num, st.R[gt])
        elif m.base == "statAP":
            above = (Cc - C)[relv].astype(np.float64)  # sampled relevant above, per stratum
            tr, sr = t[relv], s[relv]
            cross = above * st.inv_pi[tr] * inv[:, None]
            N, n = st.N[tr, sr], st.n[tr, sr]
            same = safe_div(N * (N - 1), n * (n - 1))
            cross[np.arange(len(sr)), sr] = above[np.arange(len(sr)), sr] * same
            num = np.bincount(g[relv], (inv + cross.sum(axis=1)) / kr, minlength=G)
            val = safe_div(num, st.R[gt])
        elif m.base == "infNDCG":
            gain = lab[relv] / np.log2(kr + 1.0)
            gs = np.bincount(g[relv] * S + s[relv], gain, minlength=G * S).reshape(G, S)
            dcg = (safe_div(Dc[last], Mc[last]) * gs).sum(axis=1)
            val = safe_div(dcg, st.ideal_dcg(max_rank)[gt])
        elif m.base in ("infP", "infNumRelRet", "infIPrec"):
            c_in = chat(Dc, Mc, Cc)
            if m.base == "infIPrec":
                if curve is None:
                    curve = interpolated_precision(c_in, k, g, first, st.R[gt])
                val = curve[:, level_index(m.get("recall"), str(m))]
            elif m.base == "infNumRelRet":
                val = c_in[last]
            else:
                at = np.where(length >= m.cutoff, first + m.cutoff - 1, last)
                val = c_in[at] / m.cutoff
        else:  # infNumRel
            val = st.R[gt]
        out[str(m)] = val
    frame = pd.DataFrame(
        {"name": runs["name"].to_numpy()[first], "qid": st.qids.to_numpy()[gt], **out}
    )
    long = frame.melt(id_vars=["name", "qid"], var_name="measure", value_name="value")
    if not all_topics:
        return long
    full = pd.MultiIndex.from_product(
        [names, st.qids.astype(str), list(out)], names=["name", "qid", "measure"]
    ).to_frame(index=False)
    full = full.merge(long, how="left", on=["name", "qid", "measure"])
    lacking = full["value"].isna().to_numpy()
    r_hat = st.R[st.qids.get_indexer(full["qid"])]
    is_r = full["measure"].map({str(m): m.base == "infNumRel" for m in ms}).to_numpy(dtype=bool)
    full.loc[lacking, "value"] = np.where(is_r, r_hat, 0.0)[lacking]
    return full


def evaluate_sampled(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    measures=("xinfAP", "infNDCG", "statAP"),
    *,
    per_topic: bool = False,
    max_rank: int = 1000,
    topics: str | None = None,
) -> pd.DataFrame:
    """Score ``runs`` on a sampled pool's qrels with the estimators (module docstring).

    :func:`pbtools.evaluate` hands qrels with a ``stratum`` column here when every measure is
    an estimator (or ``infAP``, ``NumRet``) and refuses the plain ones; asking for a plain
    measure here is the explicit way to score it on a sample (biased: beside the estimates).

    Parameters
    ----------
    runs : DataFrame
        ``name``, ``qid``, ``docno``, ``score`` (trec order: score desc, docno desc).
    qrels : DataFrame
        ``qid``, ``docno``, ``label`` (−1: in the universe but not sampled), ``stratum``
        (any ids; :func:`pbtools.io.read_sampled_qrels`, :func:`pbtools.pooling.sampled_qrels`).
    measures : str or list
        Sampled measures (``xinfAP``, ``infNDCG``, ``infP@n``, ``infNumRelRet``,
        ``infNumRel``, ``statAP``, each with an optional ``rel``) and any other measure,
        which is computed by :func:`pbtools.measures.evaluate` on the same qrels (unsampled
        documents unjudged: the *plain* measure, biased on a sampled pool; ``infAP`` reads
        them as trec_eval does).
    per_topic : bool
        Per-topic values, else the averages (:func:`pbtools.measures.aggregate`).
    max_rank : int
        Documents read per ranking (sample_eval.pl: 1000).
    topics : {"judged", "all"}, optional
        The topics of the averages (:mod:`pbtools.measures.topics`): those each run answers
        that the qrels hold (default, sample_eval.pl's and trec_eval's), or every qrels topic
        (trec_eval ``-c``: a topic a run lacks estimates 0, its R̂ for ``infNumRel``).

    Returns
    -------
    DataFrame
        ``name``, (``qid``), ``measure``, ``value``.

    Examples
    --------
    Stratum 1 (a, b) fully judged, stratum 2 (c, d, e, f) half sampled (π = 1/2): R̂ = 1 + 2·1.
    The run ranks a (relevant), b, c (relevant), d. At c (rank 3) the top 2 hold one relevant
    document of two, so xinfAP = (1 + 2 · (1 + 1)/3) / 3 = 0.7778; the plain AP, which counts
    only the judged relevant documents (R = 2), is (1 + 2/3) / 2.

    >>> q = pd.DataFrame({"qid": "1", "docno": list("abcdef"), "label": [1, 0, 1, 0, -1, -1],
    ...                   "stratum": [1, 1, 2, 2, 2, 2]})
    >>> run = pd.DataFrame({"name": "r", "qid": "1", "docno": list("abcd"),
    ...                     "score": [4.0, 3.0, 2.0, 1.0]})
    >>> evaluate_sampled(run, q, ["infNumRel", "xinfAP", "statAP", "AP"]).round(4)
      name    measure   value
    0    r  infNumRel  3.0000
    1    r     xinfAP  0.7778
    2    r     statAP  0.7778
    3    r         AP  0.8333
    """
    ms = parse_all(measures)
    missing = sorted({"qid", "docno", "label", "stratum"} - set(qrels.columns))
    if missing:
        raise InputError(
            f"sampled qrels need the columns qid, docno, label, stratum; missing {missing} "
            "(read them with pbtools.io.read_sampled_qrels)"
        )
    sampled = [m for m in ms if m.base in SAMPLED]
    plain = [m for m in ms if m.base not in SAMPLED]
    if int(max_rank) < 1:
        raise InputError(f"max_rank must be a positive integer, got {max_rank!r}")
    mode = topics_mode(topics)
    if mode == "answered":
        raise InputError(
            "topics='answered' has no sampled counterpart (a topic the qrels lack has no "
            "sample); use 'judged' or 'all'"
        )
    parts = []
    for rel in sorted({m.rel for m in sampled}):
        same = [m for m in sampled if m.rel == rel]
        parts.append(_estimate(runs, qrels, same, int(max_rank), mode == "all"))
    if plain:
        base = qrels[["qid", "docno", "label"]]
        pt = evaluate(runs, base, plain, per_topic=True, warn=False, topics=mode)
        parts.append(pt[["name", "qid", "measure", "value"]].astype({"measure": str}))
    pt = pd.concat(parts, ignore_index=True).astype({"name": str, "qid": str, "measure": str})
    order = {str(m): i for i, m in enumerate(ms)}
    pt = pt.assign(_m=pt["measure"].map(order))
    pt = pt.sort_values(["name", "_m", "qid"], kind="stable").drop(columns="_m")
    pt = pt.reset_index(drop=True)
    if per_topic:
        return pt
    out = aggregate(pt)
    return out.astype({"name": str, "measure": str})


def plain_measures(measures) -> list:
    """The measures among ``measures`` that are neither estimators (:data:`SAMPLED`) nor read a
    sampled qrels as meant (:data:`SAFE`): on a sample they count the unsampled documents as
    unjudged — mostly as non-relevant.

    >>> [str(m) for m in plain_measures(["xinfAP", "infAP", "AP", "P@10", "NumRet"])]
    ['AP', 'P@10']
    """
    return [m for m in parse_all(measures) if m.base not in SAMPLED and m.base not in SAFE]


def _route(runs, qrels, ms, *, keys, per_topic, topics):
    """:func:`pbtools.evaluate` on a sampled pool's qrels: the estimators, or a refusal."""
    if keys:
        raise InputError(f"sampled qrels (a stratum column) take no keys, got keys={keys!r}")
    plain = plain_measures(ms)
    if plain:
        names = ", ".join(str(m) for m in plain)
        raise InputError(
            f"the qrels are a sampled pool's (a stratum column; label -1: not sampled): {names} "
            "would count every unsampled document as unjudged, mostly as non-relevant, and "
            "underestimate the runs. Ask for the estimators (xinfAP, infNDCG, statAP, infP@n, "
            "infIPrec@x, infNumRel, infAP), or score plain measures knowingly with "
            "pbtools.measures.sampled.evaluate_sampled (beside the estimates) or on "
            "qrels.drop(columns='stratum')"
        )
    return evaluate_sampled(runs, qrels, ms, per_topic=per_topic, topics=topics)


QRELS_SCORERS["stratum"] = _route
