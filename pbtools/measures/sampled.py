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
summed counts. The strata and the per-topic values are computed in
:mod:`pbtools.measures.sampled_strata`; this module declares the measures and routes the
qrels. Golden values: ``tests/measures/test_sampled.py``
(``../shared/data/sample_eval``, 1e-4).

References
----------
Yilmaz & Aslam, "Estimating average precision with incomplete and imperfect judgments", CIKM
2006. Yilmaz, Kanoulas & Aslam, "A simple and efficient sampling method for estimating AP and
NDCG", SIGIR 2008. Aslam, Pavlu & Yilmaz, "A statistical method for system evaluation using
incomplete judgments", SIGIR 2006.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pbtools.errors import InputError
from pbtools.measures import kernels as K
from pbtools.measures.formulas import safe_div
from pbtools.measures.names import parse_all
from pbtools.measures.registry import QRELS_SCORERS, family
from pbtools.measures.topics import topics_mode

if TYPE_CHECKING:  # the estimators' frames load pandas when they run: the measures' import
    import pandas as pd  # (the command line's evaluate) stays without it

__all__ = [
    "SAMPLED",
    "SAFE",
    "evaluate_sampled",
    "stratum_counts",  # noqa: F822  (module __getattr__: loads pandas when asked)
    "plain_measures",
    "INFAP_EPSILON",
]

INFAP_EPSILON = 1e-5  # trec_eval.h
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

    >>> import pandas as pd
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
    import pandas as pd

    from pbtools.measures.evaluate import aggregate, evaluate
    from pbtools.measures.sampled_strata import estimate

    mode = topics_mode(topics)
    if mode == "answered":
        raise InputError(
            "topics='answered' has no sampled counterpart (a topic the qrels lack has no "
            "sample); use 'judged' or 'all'"
        )
    parts = []
    for rel in sorted({m.rel for m in sampled}):
        same = [m for m in sampled if m.rel == rel]
        parts.append(estimate(runs, qrels, same, int(max_rank), mode == "all"))
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


def __getattr__(name: str):
    """``stratum_counts`` (:mod:`~.sampled_strata`, which loads pandas), imported when asked."""
    if name == "stratum_counts":
        from pbtools.measures.sampled_strata import stratum_counts

        return stratum_counts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
