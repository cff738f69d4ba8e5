"""The kernels of the rest of ``trec_eval -m all_trec``: one per measure, formulas from ``m_*.c``.

Same protocol as :mod:`pbtools.measures.formulas` (rankings ``v``, relevance sets ``topics``,
each group's topic ``gt``, the parsed measure ``m``; per-group values out). ``r`` is the 1-based
rank, ``R`` the relevant documents of the topic (label ``>= rel``), ``nrr`` the relevant
retrieved, ``len`` the ranking's length, ``g_r`` a row's gain (its label, or the measure's
``gains``: :func:`~pbtools.measures.formulas.row_gain`), ``g*_k`` the k-th gain of the ideal
ranking (the positive gains of the qrels, descending) and ``P`` the number of positive ideal
gains. The formulas are in ``docs/measures.md``; the geometric means of ``GMAP`` and ``GMBpref``
and the string of ``Relstring`` are taken in :func:`pbtools.measures.aggregate` and the
``text`` column. Each kernel's docstring is its formula; the
:func:`~pbtools.measures.registry.family` call after it declares the family.
"""

from __future__ import annotations

import numpy as np

from pbtools.measures.formulas import dcg_terms, row_gain, safe_div
from pbtools.measures.kernels import PAD, POOLED, UNJUDGED, Topics, View
from pbtools.measures.params import ELEVEN
from pbtools.measures.registry import COMMON, family, family_of

__all__ = ["interpolated_precision", "ideal_gains", "ideal_dcg_at"]


def interpolated_precision(v: View, topics: Topics, gt, m, points) -> np.ndarray:
    """Groups × ``points``: trec_eval's interpolated precision at each recall level x.

    The level's relevant count is c = lround(x·R); the value is the largest precision at the
    j-th relevant document for any j ≥ max(c, 1), 0 when c > nrr (``m_iprec_at_recall.c``).

    Parameters
    ----------
    v, topics, gt, m
        The rankings, relevance sets, each group's topic and the measure (its ``rel``).
    points : sequence of float
        Recall levels in [0, 1].

    Returns
    -------
    ndarray, shape (groups, len(points))

    Examples
    --------
    Ranking relevant, non-relevant, relevant with R = 2: precisions 1 and 2/3 at the relevant
    documents.

    >>> from pbtools.measures import parse
    >>> v = View(np.zeros(3, int), np.arange(1, 4), np.array([1, 0, 1]), 1)
    >>> topics = Topics(np.zeros(3, int), np.array([1, 0, 1]), 1)
    >>> interpolated_precision(v, topics, np.zeros(1, int), parse("IPrec@0"), [0, 0.5, 1]).round(4)
    array([[1.    , 1.    , 0.6667]])
    """
    R = topics.num_rel(m.rel)[gt]

    def table():
        rel = v.rel(m.rel)
        gr, j = v.g[rel], v.rel_so_far(m.rel)[rel].astype(np.int64)
        nrr = np.bincount(gr, minlength=v.G)
        width = int(nrr.max()) if v.G else 0
        prec = np.zeros((v.G, width + 1))
        prec[gr, j - 1] = j / v.r[rel]
        return nrr, width, np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]  # j' >= j

    nrr, width, best = v.memo(("iprec", m.rel), table)
    x = np.asarray(points, dtype=np.float64)[None, :] * R[:, None]
    c = np.floor(x)
    c = (c + (x - c >= 0.5)).astype(np.int64)  # C's lround (half away from zero)
    ok = c <= nrr[:, None]
    col = np.clip(c, 1, width + 1) - 1
    return np.where(ok, best[np.arange(v.G)[:, None], col], 0.0)


def _iprec(v: View, topics: Topics, gt, m):
    """IPrec@x: the interpolated precision at recall level x (:func:`interpolated_precision`)."""
    return interpolated_precision(v, topics, gt, m, [m.get("recall")])[:, 0], None


family(
    "IPrec",
    _iprec,
    cutoff="none",
    params=("recall", *COMMON),
    at="recall",
    trec=("iprec_at_recall_{recall:.2f}",),
    citation="trec_eval m_iprec_at_recall.c",
)


def _iap(v: View, topics: Topics, gt, m):
    """IAP = the mean of IPrec at the recall levels (default 0, 0.1, …, 1)."""
    points = m.get("recall")
    ip = interpolated_precision(v, topics, gt, m, points)
    total = np.zeros(v.G)
    for k in range(len(points) - 1, -1, -1):  # trec_eval adds the highest level first
        total += ip[:, k]
    return total / len(points), None


family(
    "IAP",
    _iap,
    cutoff="none",
    params=("recall", *COMMON),
    defaults={"recall": ELEVEN},
    trec=("11pt_avg",),
    citation="trec_eval m_11pt_avg.c",
)


def _set_counts(v: View, topics: Topics, gt, m):
    """(num_ret, nrr, R) of every group, as floats."""
    return v.count(None), v.upto(v.rel(m.rel), None), topics.num_rel(m.rel)[gt]


def _set_p(v: View, topics: Topics, gt, m):
    """SetP = nrr / len; ``relative``: nrr / min(len, R)."""
    ret, nrr, R = _set_counts(v, topics, gt, m)
    return safe_div(nrr, np.minimum(ret, R) if m.get("relative") else ret), None


family(
    "SetP",
    _set_p,
    cutoff="none",
    params=(*COMMON, "relative"),
    aliases=("setrelp",),
    trec=("set_P", ("set_relative_P", {"relative": True})),
    citation="trec_eval m_set_P.c, m_set_rel_P.c",
)


def _set_r(v: View, topics: Topics, gt, m):
    """SetR = nrr / R."""
    ret, nrr, R = _set_counts(v, topics, gt, m)
    return safe_div(nrr, R), None


family("SetR", _set_r, cutoff="none", trec=("set_recall",), citation="trec_eval m_set_recall.c")


def _set_ap(v: View, topics: Topics, gt, m):
    """SetAP = SetP · SetR."""
    ret, nrr, R = _set_counts(v, topics, gt, m)
    return safe_div(nrr, ret) * safe_div(nrr, R), None


family("SetAP", _set_ap, cutoff="none", trec=("set_map",), citation="trec_eval m_set_map.c")


def _set_f(v: View, topics: Topics, gt, m):
    """SetF = (β + 1) · SetP · SetR / (β · SetP + SetR)."""
    ret, nrr, R = _set_counts(v, topics, gt, m)
    p, r, x = safe_div(nrr, ret), safe_div(nrr, R), m.beta
    return safe_div((x + 1.0) * p * r, x * p + r), None


family(
    "SetF",
    _set_f,
    cutoff="none",
    params=("beta", *COMMON),
    trec=("set_F",),
    citation="trec_eval m_set_F.c",
)


def _utility(v: View, topics: Topics, gt, m):
    """Utility = a·nrr + b·(len − nrr) + c·(R − nrr) + d·(docs + nrr − len − R)."""
    ret, nrr, R = _set_counts(v, topics, gt, m)
    a, b, c, d = (m.get(k) for k in "abcd")
    return a * nrr + b * (ret - nrr) + c * (R - nrr) + d * (m.get("docs") + nrr - ret - R), None


family(
    "Utility",
    _utility,
    cutoff="none",
    params=("a", "b", "c", "d", "docs", *COMMON),
    trec=("utility",),
    citation="trec_eval m_utility.c",
)


def _num_nonrel_ret(v: View, topics: Topics, gt, m):
    """Judged non-relevant documents retrieved (within the cut-off), summed over topics."""
    return v.upto(v.nonrel(m.rel), m.cutoff), None


family(
    "NumNonRelRet",
    _num_nonrel_ret,
    aggregate="sum",
    trec=("num_nonrel_judged_ret",),
    citation="trec_eval m_num_nonrel_judged_ret.c",
)


def _bin_g(v: View, topics: Topics, gt, m):
    """BinG = Σ_{rel_r} 1 / log2(2 + r − Σ_{i≤r} rel_i) / R."""
    rel = v.rel(m.rel)
    k = v.r[rel] + 2 - v.rel_so_far(m.rel)[rel]  # 3 + i - rel_so_far, i the 0-based rank
    w = v.zeros()
    w[rel] = 1.0 / np.log2(k.astype(np.float64))
    return safe_div(v.upto(w, None), topics.num_rel(m.rel)[gt]), None


family("BinG", _bin_g, cutoff="none", trec=("binG",), citation="trec_eval m_binG.c")


def ideal_gains(topics: Topics, m, width: int) -> np.ndarray:
    """Topics × ``width``: the gain g*_k at each position k of the ideal ranking (0 past it).

    >>> from pbtools.measures import parse
    >>> topics = Topics(np.zeros(3, int), np.array([1, 2, 0]), 1)
    >>> ideal_gains(topics, parse("nDCG"), 4).tolist()
    [[2.0, 1.0, 0.0, 0.0]]
    """
    key = ("ideal_gains", m.rel, m.get("gains"), width)
    if key not in topics._cache:
        gains, above, count = topics.ideal(m.rel, m.get("gains"))
        k = np.arange(1, width + 1)[None, :]
        out = np.zeros((topics.T, width))
        for j in range(len(gains)):  # a few gain blocks
            inside = (k > above[:, j : j + 1]) & (k <= (above + count)[:, j : j + 1])
            out[inside] = gains[j]
        topics._cache[key] = out
    return topics._cache[key]


def ideal_dcg_at(topics: Topics, m, t: np.ndarray, k: np.ndarray) -> np.ndarray:
    """IDCG of the first k positions of topic t's ideal ranking, per row (k differs per row):
    Σ_{j ≤ k} g*_j / log2(j + 1), added in rank order as trec_eval does.

    >>> from pbtools.measures import parse
    >>> topics = Topics(np.zeros(3, int), np.array([1, 2, 0]), 1)
    >>> ideal_dcg_at(topics, parse("nDCG"), np.array([0, 0]), np.array([1, 2])).round(4)
    array([2.    , 2.6309])
    """
    k = np.asarray(k, dtype=np.int64)
    width = int(k.max()) if k.size else 0
    gstar = ideal_gains(topics, m, width)
    idcg = np.zeros((topics.T, width + 1))
    idcg[:, 1:] = np.cumsum(gstar / np.log2(np.arange(2, width + 2.0)), axis=1)
    return idcg[t, k]


def _positives(topics: Topics, m) -> np.ndarray:
    """P: the number of positive gains in each topic's ideal ranking."""
    return topics.ideal(m.rel, m.get("gains"))[2].sum(axis=1)


def _g(v: View, topics: Topics, gt, m):
    """G = Σ_{g_r≠0} g_r / log2(2 + Σ_{k≤r} max(g*_k, 1) − Σ_{k≤r} g_k) ÷ Σ g*."""
    gains, above, count = topics.ideal(m.rel, m.get("gains"))
    g = row_gain(v, topics, m).astype(np.float64)
    width = int(np.max(v.r)) if np.size(v.r) else 0
    cost = np.cumsum(np.maximum(ideal_gains(topics, m, width), 1.0), axis=1)  # Σ max(g*_j, 1)
    with np.errstate(divide="ignore", invalid="ignore"):  # rows of gain 0 are not used
        spent = (2.0 + cost[gt[v.g], v.r - 1]) - v.cumf(g)
        w = np.where(g != 0, g / np.log2(spent), 0.0)
    ideal = (gains[None, :] * count).sum(axis=1)
    return safe_div(v.upto(w, None), ideal[gt]), None


family(
    "G",
    _g,
    cutoff="none",
    params=("gains", "judged_only"),
    trec=("G",),
    trec_level=False,
    citation="trec_eval m_G.c",
)


def _dcg_terms(v: View, topics: Topics, m) -> tuple[np.ndarray, np.ndarray]:
    """The rows' gains and DCG terms ``g_r / log2(r + 1)``: nDCG's own
    (:func:`~pbtools.measures.formulas.dcg_terms`, the :class:`View`'s row buffer: use them
    before another kernel asks for it)."""
    return row_gain(v, topics, m), dcg_terms(v, topics, m)


def _ndcg_rel(v: View, topics: Topics, gt, m):
    """nDCGRel = (Σ_{g_r>0} DCG(r)/IDCG(min(r, P)) + (P − retrieved gains)·DCG(len)/IDCG(P)) / P."""
    g, w = _dcg_terms(v, topics, m)
    P = _positives(topics, m)[gt]
    pos = g > 0
    dcg = v.cumf(w)[pos]
    gp, rp = v.g[pos], v.r[pos]
    terms = v.zeros()
    terms[pos] = safe_div(dcg, ideal_dcg_at(topics, m, gt[gp], np.minimum(rp, P[gp])))
    rest = (P - v.upto(pos, None)) * safe_div(v.upto(w, None), ideal_dcg_at(topics, m, gt, P))
    total = v.upto(terms, None) + rest
    return np.where(total > 0, safe_div(total, P), 0.0), None


family(
    "nDCGRel",
    _ndcg_rel,
    cutoff="none",
    params=("gains", "judged_only"),
    aliases=("ndcg_rel",),
    trec=("ndcg_rel",),
    trec_level=False,
    citation="trec_eval m_ndcg_rel.c",
)


def _rndcg(v: View, topics: Topics, gt, m):
    """RnDCG = the mean of DCG(E)/IDCG(E) at the end E of each ideal gain block (and
    DCG(len)/IDCG(P) when len ≥ P + 2)."""
    gains, above, count = topics.ideal(m.rel, m.get("gains"))
    g, w = _dcg_terms(v, topics, m)
    P = _positives(topics, m)[gt]
    total, num = np.zeros(v.G), np.zeros(v.G)
    for k in range(len(gains)):  # one record at the end of each gain block
        end = (above[:, k] + count[:, k])[gt]
        has = count[gt, k] > 0
        rec = safe_div(v.upto(w, end), ideal_dcg_at(topics, m, gt, end))
        total += np.where(has, rec, 0.0)
        num += has
    tail = v.count(None) >= P + 2  # the last record, at the end of a long ranking
    full = safe_div(v.upto(w, None), ideal_dcg_at(topics, m, gt, P))
    total += np.where(tail, full, 0.0)
    num += tail
    return np.where(topics.num_rel(m.rel)[gt] > 0, safe_div(total, num), 0.0), None


family(
    "RnDCG",
    _rndcg,
    cutoff="none",
    params=("gains", *COMMON),
    trec=("Rndcg",),
    trec_level=False,
    citation="trec_eval m_Rndcg.c",
)


def _rbp_resid(v: View, topics: Topics, gt, m):
    """RBPResid = p^len + (1 − p) Σ_{unjudged r} p^{r−1}; 0 without unjudged documents."""
    value, resid = family_of("RBP").kernel(v, topics, gt, m)
    return np.where(v.upto(v.unjudged(), None) > 0, resid, 0.0), None


family(
    "RBPResid",
    _rbp_resid,
    cutoff="none",
    params=("p", "judged_only"),
    trec=(("rbp_resid", {"p": 0.9}),),
    trec_level=False,
    citation="trec_eval m_rbp_resid.c",
)


_CHARS = np.frombuffer(b"0123456789", dtype=np.uint8)


def _relstring(v: View, topics: Topics, gt, m):
    """A string: the label of each of the first n documents (``-`` not in the qrels, ``.``
    in them with a negative label, ``>`` above 9); no average."""
    n = m.cutoff
    sel = (v.r <= n) & (v.label != PAD)
    lab = np.asarray(v.label[sel]).astype(np.int64)
    code = np.full(len(lab), ord("<"), dtype=np.uint8)
    code[lab > 9] = ord(">")
    digit = (lab >= 0) & (lab <= 9)
    code[digit] = _CHARS[lab[digit]]
    code[lab == UNJUDGED] = ord("-")  # not in the qrels
    code[lab == POOLED] = ord(".")  # in the qrels, unjudged
    mat = np.zeros((v.G, n), dtype=np.uint8)
    mat[v.g[sel], v.r[sel] - 1] = code
    text = mat.view(f"S{n}").ravel().astype(f"U{n}")
    return np.full(v.G, np.nan), text


family(
    "Relstring",
    _relstring,
    params=("judged_only",),
    aggregate="text",
    default_cutoff=10,
    trec=(("relstring", {"cutoff": 10}), "relstring_{cutoff}"),
    trec_level=False,
    citation="trec_eval m_relstring.c",
)


family(
    "GMAP",
    family_of("AP").kernel,
    cutoff="none",
    aggregate="geometric",
    trec=("gm_map",),
    formula="AP per topic; averaged as exp(mean(log(max(AP, 10⁻⁵)))).",
    citation="trec_eval m_gm_map.c",
)
family(
    "GMBpref",
    family_of("Bpref").kernel,
    cutoff="none",
    aggregate="geometric",
    trec=("gm_bpref",),
    formula="Bpref per topic; averaged as exp(mean(log(max(Bpref, 10⁻⁵)))).",
    citation="trec_eval m_gm_bpref.c",
)
