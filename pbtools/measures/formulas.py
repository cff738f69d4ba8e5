"""The per-topic formula of every measure pbtools computes, one kernel per measure.

Each kernel takes the rankings (:class:`~pbtools.measures.kernels.View`), their relevance sets
(:class:`~pbtools.measures.kernels.Topics`), each group's topic ``gt`` and the parsed
:class:`~pbtools.measures.names.Measure` (cut-off ``n``, threshold ``rel``, ``p``, ``beta``) and
returns per-group values (and RBP's residual). Notation and sources: :mod:`pbtools.measures`.
Each kernel's docstring is its formula, and the :func:`~pbtools.measures.registry.family` call
after it is the family's one declaration (name, parameters, trec_eval names, depth, citation).
A new measure is a kernel and such a call (``docs/extending.md``).
"""

from __future__ import annotations

import numpy as np

from pbtools.measures.kernels import Topics, View
from pbtools.measures.registry import COMMON, family
from pbtools.measures.segments import take_into

__all__ = ["safe_div", "row_gain"]


def safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` where ``b > 0``, else 0 (trec_eval's convention for empty denominators)."""
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a, b, out=out, where=b > 0)
    return out


def _num_ret(v: View, topics: Topics, gt, m):
    """min(n, len): documents retrieved (within the cut-off), summed over topics."""
    return v.count(m.cutoff), None


family(
    "NumRet",
    _num_ret,
    params=("judged_only",),
    aggregate="sum",
    trec=("num_ret",),
    ranking_only=True,
    citation="trec_eval m_num_ret.c",
)


def _num_rel(v: View, topics: Topics, gt, m):
    """R: the relevant documents of the topic in the qrels, summed over topics."""
    return topics.num_rel(m.rel)[gt], None


family(
    "NumRel",
    _num_rel,
    cutoff="none",
    params=("rel",),
    aggregate="sum",
    trec=("num_rel",),
    citation="trec_eval m_num_rel.c",
)


def _precision(v: View, topics: Topics, gt, m):
    """P@n = Σ_{r≤n} rel_r / n (short runs still divide by n); ``relative``: ÷ min(n, R)."""
    hits = v.upto(v.rel(m.rel), m.cutoff)
    if m.get("relative"):  # trec_eval relative_P: ÷ min(n, R)
        return safe_div(hits, np.minimum(m.cutoff, topics.num_rel(m.rel)[gt])), None
    return hits / m.cutoff, None


family(
    "P",
    _precision,
    cutoff="required",
    params=(*COMMON, "relative"),
    aliases=("prec",),
    trec=("P_{cutoff}", ("relative_P_{cutoff}", {"relative": True})),
    ranking_only=lambda m: not m.get("relative"),
    citation="trec_eval m_P.c, m_relative_P.c",
)


def _recall(v: View, topics: Topics, gt, m):
    """R@n = Σ_{r≤n} rel_r / R."""
    return safe_div(v.upto(v.rel(m.rel), m.cutoff), topics.num_rel(m.rel)[gt]), None


family(
    "R",
    _recall,
    cutoff="required",
    aliases=("recall",),
    trec=("recall_{cutoff}",),
    citation="trec_eval m_recall.c",
)


def _num_rel_ret(v: View, topics: Topics, gt, m):
    """nrr = Σ_{r≤n} rel_r: relevant documents retrieved, summed over topics."""
    return v.upto(v.rel(m.rel), m.cutoff), None


family(
    "NumRelRet",
    _num_rel_ret,
    aggregate="sum",
    trec=("num_rel_ret",),
    ranking_only=True,
    citation="trec_eval m_num_rel_ret.c",
)


def _anti_precision(v: View, topics: Topics, gt, m):
    """P̄@n = Σ_{r≤n} [0 ≤ label_r < rel] / n: the share of the top n judged non-relevant."""
    return v.upto(v.nonrel(m.rel), m.cutoff) / m.cutoff, None


family(
    "AntiP",
    _anti_precision,
    cutoff="required",
    aliases=("antiprec",),
    ranking_only=True,
    citation="Lipani, Lupu & Hanbury, SIGIR 2015, §3",
)


def _unjudged(v: View, topics: Topics, gt, m):
    """k̄@n = 1 − P@n − P̄@n (ranks past the end count as unjudged); ``padded=False``: the
    unjudged documents of the top n ÷ n (trec_eval's ``unj_n``)."""
    n = m.cutoff
    if not m.get("padded"):  # trec_eval unj_n: ranks past the end count as judged
        return v.upto(v.unjudged(), n) / n, None
    return (n - v.upto(v.label >= 0, n)) / n, None


family(
    "Unjudged",
    _unjudged,
    cutoff="required",
    params=("padded",),
    aliases=("unj",),
    trec=(("unj_{cutoff}", {"padded": False}),),
    ranking_only=True,
    citation="Lipani, Lupu & Hanbury, SIGIR 2015, §3; trec_eval m_unj.c",
)


def _judged(v: View, topics: Topics, gt, m):
    """Judged documents in the top min(n, len) ÷ min(n, len)."""
    return safe_div(v.upto(v.label >= 0, m.cutoff), v.count(m.cutoff)), None


family("Judged", _judged, cutoff="required", params=(), ranking_only=True, citation="ir_measures")


def _average_precision(v: View, topics: Topics, gt, m):
    """AP@n = Σ_{r≤n, rel_r} P@r / R."""

    def terms(out):  # rel_so_far / r at the relevant rows, 0 elsewhere
        rel = v.rel(m.rel)
        out.fill(0.0)
        out[rel] = v.cum_at(rel, rel) / v.r[rel]

    w = v.rows_memo(("AP terms", m.rel), terms)  # shared by AP@n of every n and GMAP
    return safe_div(v.upto(w, m.cutoff), topics.num_rel(m.rel)[gt]), None


family(
    "AP",
    _average_precision,
    aliases=("MAP",),
    trec=("map", "map_cut_{cutoff}"),
    citation="trec_eval m_map.c, m_map_cut.c",
)


def _reciprocal_rank(v: View, topics: Topics, gt, m):
    """RR@n = 1 / the rank of the first relevant document, 0 if none within n."""
    first = v.first_rel_rank(m.rel)
    hit = first <= (np.inf if m.cutoff is None else m.cutoff)
    return np.where(hit, 1.0 / first, 0.0), None


family(
    "RR",
    _reciprocal_rank,
    aliases=("MRR",),
    trec=("recip_rank",),
    ranking_only=True,
    citation="trec_eval m_recip_rank.c",
)


def _success(v: View, topics: Topics, gt, m):
    """Success@n = 1 if a relevant document is in the top n, else 0."""
    return (v.first_rel_rank(m.rel) <= m.cutoff).astype(np.float64), None


family(
    "Success",
    _success,
    cutoff="required",
    trec=("success_{cutoff}",),
    ranking_only=True,
    citation="trec_eval m_success.c",
)


def _r_precision(v: View, topics: Topics, gt, m):
    """Rprec = Σ_{r≤R} rel_r / R; ``mult=x``: P@c with c = ⌊x·R + 0.9⌋."""
    R = topics.num_rel(m.rel)[gt]
    if m.get("mult") != 1.0:  # trec_eval Rprec_mult: P@c, c = ⌊mult·R + 0.9⌋ (m_Rprec_mult.c)
        c = np.floor(m.get("mult") * R + 0.9)
        return safe_div(v.upto(v.rel(m.rel), c.astype(np.int64)), c), None
    rel = v.rel(m.rel)  # the relevant rows at ranks <= R, counted per group
    gr = v.g[rel]
    hits = np.bincount(gr[v.r[rel] <= R[gr]], minlength=v.G).astype(np.float64)
    return safe_div(hits, R), None


family(
    "Rprec",
    _r_precision,
    cutoff="none",
    params=(*COMMON, "mult"),
    trec=("Rprec", "Rprec_mult_{mult:.2f}"),
    citation="trec_eval m_Rprec.c, m_Rprec_mult.c",
)


def _bpref(v: View, topics: Topics, gt, m):
    """Bpref = (1/R) Σ_{rel_r} (1 − min(nonrel above r, R) / min(N, R)), unjudged skipped."""
    return v.memo(("Bpref", m.rel), lambda: _bpref_values(v, topics, gt, m)), None  # and GMBpref


def _bpref_values(v: View, topics: Topics, gt, m):
    R = topics.num_rel(m.rel)[gt]
    N = topics.num_nonrel(m.rel)[gt]
    rel = v.rel(m.rel)
    above = v.cum_at(v.nonrel(m.rel), rel).astype(np.float64)
    gm = v.g[rel]
    denom = np.minimum(N, R)[gm]
    frac = np.where(above > 0, 1.0 - safe_div(np.minimum(above, R[gm]), denom), 1.0)

    def terms(out):
        out.fill(0.0)
        out[rel] = frac

    return safe_div(v.upto(v.rows_memo(("Bpref terms", m.rel), terms), None), R)


family("Bpref", _bpref, cutoff="none", trec=("bpref",), citation="trec_eval m_bpref.c")


def row_gain(v: View, topics: Topics, m) -> np.ndarray:
    """The gain of each row: its label when ``>= m.rel`` (else 0), or the measure's ``gains``
    (``nDCG(gains={1:3,2:9})``, trec_eval ``ndcg.1=3,2=9``) for the labels they name."""
    gains = m.get("gains")
    if gains is None:
        return v.gain(m.rel)
    gv = topics.gain_vector(m.rel, gains)
    lab = v.label
    ok = (lab >= 0) & (lab < len(gv))
    return np.where(ok, gv[np.clip(lab, 0, len(gv) - 1)], 0.0)


def dcg_terms(v: View, topics: Topics, m) -> np.ndarray:
    """``g_r / log2(r + 1)`` of every row (:meth:`~.kernels.View.rows_memo`: shared by every
    cut-off): one logarithm a rank, not one a row; with the labels' own gains, no gain array
    (the label divided where relevant, the rest multiplied by 0)."""

    def terms(out):
        top = int(v.r.max()) if v.r.size else 0
        take_into(np.log2(np.arange(1.0, top + 2.0)), v.r, out)
        if m.get("gains") is not None:
            np.divide(row_gain(v, topics, m), out, out=out)
            return
        rel = v.rel(m.rel)
        np.divide(v.label, out, out=out, where=rel)
        out *= rel

    return v.rows_memo(("DCG terms", m.rel, m.get("gains")), terms)


def _ndcg(v: View, topics: Topics, gt, m):
    """nDCG@n = DCG(n) / IDCG(n), DCG(k) = Σ_{r≤k} g_r / log2(r + 1); 0 when IDCG is 0."""

    w = dcg_terms(v, topics, m)
    ideal = topics.ideal_dcg(m.rel, m.cutoff, m.get("gains"))
    return safe_div(v.upto(w, m.cutoff), ideal[gt]), None


family(
    "nDCG",
    _ndcg,
    params=(*COMMON, "gains"),
    trec=("ndcg", "ndcg_cut_{cutoff}"),
    trec_level=False,
    citation="Järvelin & Kekäläinen, TOIS 2002; trec_eval m_ndcg.c, m_ndcg_cut.c",
)


def _rbp(v: View, topics: Topics, gt, m):
    """RBP@n = (1 − p) Σ_{r≤n} rel_r p^{r−1}; residual: the weight of the unjudged ranks and of
    the ranks past the end up to n; ``graded``: gain label ÷ the topic's largest label."""
    p, n = m.p, m.cutoff
    weight = v.memo(("p^(r-1)", p), lambda: p ** (v.r - 1.0))
    if m.get("graded"):  # trec_eval rbp: gain = label ÷ the topic's largest label (if > 1)
        top = np.maximum((topics.hist > 0).cumsum(axis=1).argmax(axis=1), 1)[gt]
        gain = np.where(v.label > 0, v.label, 0) / top[v.g]
        value = (1 - p) * v.upto(gain * weight, n)
    else:
        value = (1 - p) * v.upto(np.where(v.rel(m.rel), weight, 0.0), n)
    unj = (1 - p) * v.upto(np.where(v.unjudged(), weight, 0.0), n)
    tail = p ** v.count(n) - (0.0 if n is None else p**n)
    return value, unj + tail


family(
    "RBP",
    _rbp,
    params=("p", *COMMON, "graded"),
    trec=(("rbp", {"p": 0.9}),),
    trec_level=False,
    ranking_only=lambda m: not m.get("graded"),
    citation="Moffat & Zobel, TOIS 2008; trec_eval m_rbp.c",
)


def _q_measure(v: View, topics: Topics, gt, m):
    """Q@n = (1/R) Σ_{r≤n, rel_r} (β·cg(r) + count(r)) / (β·cg*(r) + r)."""
    R = topics.num_rel(m.rel)[gt]
    rel = v.rel(m.rel)
    cg = v.cum(v.gain(m.rel))[rel].astype(np.float64)
    count = v.rel_so_far(m.rel)[rel].astype(np.float64)
    rm = v.r[rel]
    cg_star = topics.ideal_cg(m.rel, gt[v.g[rel]], rm)
    w = v.zeros()
    w[rel] = (m.beta * cg + count) / (m.beta * cg_star + rm)
    return safe_div(v.upto(w, m.cutoff), R), None


family("Q", _q_measure, params=("beta", *COMMON), citation="Sakai, SIGIR 2008, §3")
