"""The stratified estimators of :mod:`pbtools.measures.sampled`: per topic and stratum the
sampled pool's counts (:func:`stratum_counts`, :class:`Strata`) and the per-topic values of
xinfAP, infNDCG, infP@n, infIPrec@x, infNumRelRet, infNumRel and statAP (:func:`estimate`).

The formulas and sample_eval.pl's conventions are in :mod:`pbtools.measures.sampled`'s
docstring; :func:`pbtools.measures.sampled.evaluate_sampled` is the entry point.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.frames import group_starts, judge, ranked, require_columns
from pbtools.ids import codes, encode
from pbtools.measures.formulas import safe_div
from pbtools.measures.sampled_iprec import interpolated_precision, level_index

__all__ = ["Strata", "estimate", "stratum_counts"]

_EPS_REL, _EPS_SAMPLED = 1e-5, 3e-5  # sample_eval.pl's smoothing of c_s / m_s


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


class Strata:
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


def _rows(runs: pd.DataFrame, qrels: pd.DataFrame, st: Strata, max_rank: int):
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


def estimate(runs, qrels, ms, max_rank: int, all_topics: bool) -> pd.DataFrame:
    """Per-topic values of the sampled measures ``ms`` (all with one ``rel``); with
    ``all_topics`` (trec_eval ``-c``) every qrels topic a run lacks too: 0, R̂ for infNumRel.

    ``runs`` and ``qrels`` as :func:`pbtools.measures.sampled.evaluate_sampled` takes them,
    ``ms`` parsed measures (:func:`pbtools.measures.names.parse_all`); returns ``name``,
    ``qid``, ``measure``, ``value``.

    Examples
    --------
    >>> from pbtools.measures.names import parse_all
    >>> q = pd.DataFrame({"qid": "1", "docno": list("abcdef"), "label": [1, 0, 1, 0, -1, -1],
    ...                   "stratum": [1, 1, 2, 2, 2, 2]})
    >>> run = pd.DataFrame({"name": "r", "qid": "1", "docno": list("abcd"),
    ...                     "score": [4.0, 3.0, 2.0, 1.0]})
    >>> estimate(run, q, parse_all(["xinfAP", "infNumRel"]), 1000, False).round(4)
      name qid    measure   value
    0    r   1     xinfAP  0.7778
    1    r   1  infNumRel  3.0000
    """
    rel = ms[0].rel
    st = Strata(qrels, rel)
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
