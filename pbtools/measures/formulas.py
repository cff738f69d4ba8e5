"""The per-topic formula of every measure pbtools computes, one kernel per measure.

Each kernel takes the rankings (:class:`~pbtools.measures.kernels.View`), their relevance sets
(:class:`~pbtools.measures.kernels.Topics`), each group's topic ``gt`` and the parsed
:class:`~pbtools.measures.names.Measure` (cut-off ``n``, threshold ``rel``, ``p``, ``beta``) and
returns per-group values (and RBP's residual). Notation and sources: :mod:`pbtools.measures`.
A new measure is a kernel registered with :func:`pbtools.measures.register_measure`
(``docs/extending.md``).
"""

from __future__ import annotations

import numpy as np

from pbtools.measures.kernels import KERNELS, Topics, View

__all__ = ["safe_div", "row_gain"]


def safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` where ``b > 0``, else 0 (trec_eval's convention for empty denominators)."""
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a, b, out=out, where=b > 0)
    return out


def _num_ret(v: View, topics: Topics, gt, m):
    return v.count(m.cutoff), None


def _num_rel(v: View, topics: Topics, gt, m):
    return topics.num_rel(m.rel)[gt], None


def _precision(v: View, topics: Topics, gt, m):
    hits = v.upto(v.rel(m.rel), m.cutoff)
    if m.get("relative"):  # trec_eval relative_P: ÷ min(n, R)
        return safe_div(hits, np.minimum(m.cutoff, topics.num_rel(m.rel)[gt])), None
    return hits / m.cutoff, None


def _recall(v: View, topics: Topics, gt, m):
    return safe_div(v.upto(v.rel(m.rel), m.cutoff), topics.num_rel(m.rel)[gt]), None


def _num_rel_ret(v: View, topics: Topics, gt, m):
    return v.upto(v.rel(m.rel), m.cutoff), None


def _anti_precision(v: View, topics: Topics, gt, m):
    return v.upto(v.nonrel(m.rel), m.cutoff) / m.cutoff, None


def _unjudged(v: View, topics: Topics, gt, m):
    n = m.cutoff
    if not m.get("padded"):  # trec_eval unj_n: ranks past the end count as judged
        return v.upto(v.unjudged(), n) / n, None
    return (n - v.upto(v.label >= 0, n)) / n, None


def _judged(v: View, topics: Topics, gt, m):
    return safe_div(v.upto(v.label >= 0, m.cutoff), v.count(m.cutoff)), None


def _average_precision(v: View, topics: Topics, gt, m):
    def terms():
        w = v.rel_so_far(m.rel) / v.r
        w[~v.rel(m.rel)] = 0.0
        return w

    w = v.memo(("AP terms", m.rel), terms)  # shared by AP@n of every n and GMAP
    return safe_div(v.upto(w, m.cutoff), topics.num_rel(m.rel)[gt]), None


def _reciprocal_rank(v: View, topics: Topics, gt, m):
    first = v.first_rel_rank(m.rel)
    hit = first <= (np.inf if m.cutoff is None else m.cutoff)
    return np.where(hit, 1.0 / first, 0.0), None


def _success(v: View, topics: Topics, gt, m):
    return (v.first_rel_rank(m.rel) <= m.cutoff).astype(np.float64), None


def _r_precision(v: View, topics: Topics, gt, m):
    R = topics.num_rel(m.rel)[gt]
    if m.get("mult") != 1.0:  # trec_eval Rprec_mult: P@c, c = ⌊mult·R + 0.9⌋ (m_Rprec_mult.c)
        c = np.floor(m.get("mult") * R + 0.9)
        return safe_div(v.upto(v.rel(m.rel), c.astype(np.int64)), c), None
    hits = v.rel(m.rel) & (v.r <= R[v.g])
    return safe_div(v.upto(hits, None), R), None


def _bpref(v: View, topics: Topics, gt, m):
    return v.memo(("Bpref", m.rel), lambda: _bpref_values(v, topics, gt, m)), None  # and GMBpref


def _bpref_values(v: View, topics: Topics, gt, m):
    R = topics.num_rel(m.rel)[gt]
    N = topics.num_nonrel(m.rel)[gt]
    rel = v.rel(m.rel)
    above = v.cum(v.nonrel(m.rel))[rel].astype(np.float64)
    gm = v.g[rel]
    denom = np.minimum(N, R)[gm]
    frac = np.where(above > 0, 1.0 - safe_div(np.minimum(above, R[gm]), denom), 1.0)
    w = v.zeros()
    w[rel] = frac
    return safe_div(v.upto(w, None), R)


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


def _ndcg(v: View, topics: Topics, gt, m):
    def terms():  # g_r / log2(r + 1), shared by every cut-off
        w = np.log2(v.r + 1.0)
        np.divide(row_gain(v, topics, m), w, out=w)
        return w

    w = v.memo(("DCG terms", m.rel, m.get("gains")), terms)
    ideal = topics.ideal_dcg(m.rel, m.cutoff, m.get("gains"))
    return safe_div(v.upto(w, m.cutoff), ideal[gt]), None


def _rbp(v: View, topics: Topics, gt, m):
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


def _q_measure(v: View, topics: Topics, gt, m):
    R = topics.num_rel(m.rel)[gt]
    rel = v.rel(m.rel)
    cg = v.cum(v.gain(m.rel))[rel].astype(np.float64)
    count = v.rel_so_far(m.rel)[rel].astype(np.float64)
    rm = v.r[rel]
    cg_star = topics.ideal_cg(m.rel, gt[v.g[rel]], rm)
    w = v.zeros()
    w[rel] = (m.beta * cg + count) / (m.beta * cg_star + rm)
    return safe_div(v.upto(w, m.cutoff), R), None


KERNELS.update(
    {
        "NumRet": _num_ret,
        "NumRel": _num_rel,
        "P": _precision,
        "R": _recall,
        "NumRelRet": _num_rel_ret,
        "AntiP": _anti_precision,
        "Unjudged": _unjudged,
        "Judged": _judged,
        "AP": _average_precision,
        "RR": _reciprocal_rank,
        "Success": _success,
        "Rprec": _r_precision,
        "Bpref": _bpref,
        "nDCG": _ndcg,
        "RBP": _rbp,
        "Q": _q_measure,
    }
)
