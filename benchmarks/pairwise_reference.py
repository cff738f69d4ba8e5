"""The simplest compiled reference of the pairwise stage, against pbtools' (issue 30, item 3).

The per-(pair × topic) work of the two pairwise estimators, written the plain way — one loop per
(run to score u, pooled run p ∈ R_p(u), topic), no deduplication, no windows, no chunking —
in numba (compiled once, cached; one core):

* Lipani et al. 2015, Algorithm 1: the merged run r' = r_p ∘ r_u at α = 1 (Eq. 2: p's exclusive
  documents keep their rank, the shared ones take u's; a two-pointer merge of the two sorted
  sequences, the tie rule of :mod:`pbtools.corrections.merge`), its P@n and P̄@n on u's qrels
  variant per topic, their means over the topics, δP, δP̄, δk per pair, and per run the Δ means
  over R_p (pandas' compensated group mean, re-done), λ (Eq. 3) and the corrected score;
* Webber & Park 2009, Algorithm 1: per (pair, topic) the loss of p's P@n when p is withdrawn —
  a judged document of p's top n is lost when no run of (R_p(u) \\ {p}) ∪ {u} (``replace``)
  placed it in its top d — then per run the mean loss, the adjustment and the estimate.

Both read the encoded problem pbtools' estimators read (``Problem``: the dense rankings ``enc.D``,
the label variants ``lab``, ``present``, R_p as ``pair_u``/``pair_p``), so the comparison is of
the pairwise stage alone: encoding, pool inference and the truth are outside both. P@n only
(the measures ``analyze`` corrects by default), α = 1, ``topics="judged"``, no rounding: the
principled defaults (:mod:`pbtools.presets`), either tie rule, ``replace`` either way.

The outputs are compared for identity (``==``, not a tolerance): per (pair, topic) the merged
P@n, P̄@n and the Webber & Park losses, and per (run, measure) every column pbtools' estimators
return (Δ's, λ, k̄, adjustment, estimate).

    PYTHONPATH=. python benchmarks/pairwise_reference.py [--shape synth129] [--repeat 3]

prints, for the leave-one-organisation-out problem of the pooled runs (R_p: the pooled runs
outside the run's organisation, its qrels the pool of the others at the inferred depth) with
analyze's measures: the (pair × topic) rows, the reference's time (wall and CPU, one core,
after one warm-up call that compiles), pbtools' Lipani + Webber & Park ``estimate`` on the same
problem (wall and CPU, on every core and on one thread), medians of ``--repeat`` interleaved
rounds, and the ratios pbtools ÷ reference.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

try:
    from numba import njit
except ImportError:  # the test skips; running the script says what is missing
    njit = None

#: the measures ``analyze`` corrects by default (:data:`pbtools.experiments.analysis.MEASURES`)
MEASURES = ("P@5", "P@10", "P@20", "P@30", "P@100")


def _find(attr: str, *modules: str):
    """``attr`` from the first of ``modules`` that has it (the engine's modules moved to
    ``pbtools.engine`` in issue 30: the script runs on either layout)."""
    import importlib

    for name in modules:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(mod, attr):
            return getattr(mod, attr)
    raise ImportError(f"{attr} is in none of {', '.join(modules)}")


def _jit(fn):
    return fn if njit is None else njit(cache=True, nogil=True, error_model="numpy")(fn)


# --------------------------------------------------------------------------- compiled kernels
@_jit
def _hits(D, lab, s, v, t, n_docs, cut, rel, out_rel, out_non):
    """Relevant and judged non-relevant documents of run s's top cut[k] on topic t under
    variant v (cut ascending)."""
    r = 0
    nr = 0
    k = 0
    K = len(cut)
    for j in range(min(n_docs, cut[K - 1])):
        x = D[s, t, j]
        if x >= 0:
            lb = lab[v, t, x]
            if lb >= rel:
                r += 1
            elif lb >= 0:
                nr += 1
        while k < K and cut[k] == j + 1:
            out_rel[k] = r
            out_non[k] = nr
            k += 1
    while k < K:
        out_rel[k] = r
        out_non[k] = nr
        k += 1


@_jit
def _rank_table(D, length, U):
    """ρ(x, r) on topic t for every run, topic and local document (0: absent)."""
    R, T, L = D.shape
    RK = np.zeros((R, T, U), np.int32)
    for r in range(R):
        for t in range(T):
            for j in range(length[r, t]):
                if D[r, t, j] >= 0:
                    RK[r, t, D[r, t, j]] = j + 1
    return RK


@_jit
def _merged_hits(D, RK, length, lab, u, p, v, t, cut, rel, lip_tie, out_rel, out_non):
    """P@n and P̄@n hit counts of r' = r_p ∘ r_u (α = 1) on topic t: p's exclusive documents
    keyed by their rank in p, the shared ones by their rank in u, merged; a tie puts the
    exclusive one first, or (``lip_tie``) the shared one when it moved up in u."""
    Lu, Lp = length[u, t], length[p, t]
    K = len(cut)
    N = cut[K - 1]
    i = 0  # next candidate exclusive document of p
    j = 0  # next candidate shared document, in u's order
    r = 0
    nr = 0
    k = 0
    pos = 0
    while pos < N:
        while i < Lp and (D[p, t, i] < 0 or RK[u, t, D[p, t, i]] > 0):
            i += 1
        while j < Lu and (D[u, t, j] < 0 or RK[p, t, D[u, t, j]] == 0):
            j += 1
        if i >= Lp and j >= Lu:
            break
        if j >= Lu:
            take_shared = False
        elif i >= Lp:
            take_shared = True
        elif j < i:
            take_shared = True
        elif i < j:
            take_shared = False
        else:  # equal keys
            take_shared = lip_tie and RK[p, t, D[u, t, j]] > j + 1
        if take_shared:
            x = D[u, t, j]
            j += 1
        else:
            x = D[p, t, i]
            i += 1
        pos += 1
        lb = lab[v, t, x]
        if lb >= rel:
            r += 1
        elif lb >= 0:
            nr += 1
        while k < K and cut[k] == pos:
            out_rel[k] = r
            out_non[k] = nr
            k += 1
    while k < K:
        out_rel[k] = r
        out_non[k] = nr
        k += 1


@_jit
def _pair_scan(D, length, lab, present, new, new_var, pair_u, pair_p, depth, cut, rel, lip, rep):
    """Every (pair, topic) row: the merged run's hits (Lipani), p's own hits and its hits after
    the withdrawal (Webber & Park); per pair the topic means and per run the estimates' inputs.

    Returns per pair × topic × cut-off: merged relevant / non-relevant hits (−1: no row), p's
    relevant / non-relevant hits, p's relevant hits with the lost documents unjudged (−1: no
    row); and per pair: the topic counts of the merge and of p.
    """
    R, T, L = D.shape
    U = lab.shape[2]
    K = len(cut)
    n_pairs = len(pair_u)
    m_rel = np.full((n_pairs, T, K), -1, np.int32)
    m_non = np.full((n_pairs, T, K), -1, np.int32)
    p_rel = np.full((n_pairs, T, K), -1, np.int32)
    p_non = np.full((n_pairs, T, K), -1, np.int32)
    a_rel = np.full((n_pairs, T, K), -1, np.int32)
    RK = _rank_table(D, length, U)
    cnt = np.zeros((T, U), np.int32)  # runs of R_p(u) with the document in their top d
    u_top = np.zeros((T, U), np.bool_)  # u's top d
    o_rel = np.zeros(K, np.int32)
    o_non = np.zeros(K, np.int32)
    W = cut[K - 1]
    lo = 0
    while lo < n_pairs:  # the pairs of one run to score u (pairs sorted by u)
        hi = lo
        while hi < n_pairs and pair_u[hi] == pair_u[lo]:
            hi += 1
        u = new[pair_u[lo]]
        v = new_var[pair_u[lo]]
        for q in range(lo, hi):
            p = pair_p[q]
            for t in range(T):
                for j in range(min(depth, length[p, t])):
                    if D[p, t, j] >= 0:
                        cnt[t, D[p, t, j]] += 1
        for t in range(T):
            for j in range(min(depth, length[u, t])):
                if D[u, t, j] >= 0:
                    u_top[t, D[u, t, j]] = True
        for q in range(lo, hi):
            p = pair_p[q]
            for t in range(T):
                if length[p, t] == 0 or not present[v, t]:
                    continue
                _hits(D, lab, p, v, t, length[p, t], cut, rel, o_rel, o_non)
                for k in range(K):
                    p_rel[q, t, k] = o_rel[k]
                    p_non[q, t, k] = o_non[k]
                if length[u, t] > 0:
                    _merged_hits(D, RK, length, lab, u, p, v, t, cut, rel, lip, o_rel, o_non)
                    for k in range(K):
                        m_rel[q, t, k] = o_rel[k]
                        m_non[q, t, k] = o_non[k]
                # Webber & Park: p's relevant hits once its lost documents are unjudged
                r = 0
                k = 0
                for j in range(min(W, length[p, t])):
                    x = D[p, t, j]
                    if x >= 0 and lab[v, t, x] >= rel:
                        others = cnt[t, x] - (1 if j < depth else 0)
                        if others > 0 or (rep and u_top[t, x]):
                            r += 1
                    while k < K and cut[k] == j + 1:
                        a_rel[q, t, k] = r
                        k += 1
                while k < K:
                    a_rel[q, t, k] = r
                    k += 1
        for q in range(lo, hi):  # the count tables back to zero
            p = pair_p[q]
            for t in range(T):
                for j in range(min(depth, length[p, t])):
                    if D[p, t, j] >= 0:
                        cnt[t, D[p, t, j]] -= 1
        for t in range(T):
            for j in range(min(depth, length[u, t])):
                if D[u, t, j] >= 0:
                    u_top[t, D[u, t, j]] = False
        lo = hi
    return m_rel, m_non, p_rel, p_non, a_rel


@_jit
def _run_means(D, length, lab, present, slots, var, cut, rel):
    """Per run (slot, variant): P@n and P̄@n means over its judged topics (NaN without one)."""
    n, K = len(slots), len(cut)
    T = D.shape[1]
    out = np.zeros((n, 2 * K))
    o_rel = np.zeros(K, np.int32)
    o_non = np.zeros(K, np.int32)
    for i in range(n):
        s, v = slots[i], var[i]
        c = 0.0
        for t in range(T):
            if length[s, t] == 0 or not present[v, t]:
                continue
            _hits(D, lab, s, v, t, length[s, t], cut, rel, o_rel, o_non)
            for k in range(K):
                out[i, 2 * k] += o_rel[k] / cut[k]
                out[i, 2 * k + 1] += o_non[k] / cut[k]
            c += 1.0
        for k in range(2 * K):
            out[i, k] = out[i, k] / c
    return out


@_jit
def _estimates(m_rel, m_non, p_rel, p_non, a_rel, own, pair_u, n_new, cut):
    """Per pair the topic means; per (run, cut-off) Lipani's Δ's, λ, estimate and Webber &
    Park's adjustment (the float operations in pbtools' order: see :func:`reference`)."""
    n_pairs, T, K = m_rel.shape
    merged = np.full((n_pairs, 2 * K), np.nan)
    full = np.full((n_pairs, 2 * K), np.nan)
    loss = np.zeros((n_pairs, K))
    n_top = np.zeros(n_pairs)
    for q in range(n_pairs):
        mc = 0.0
        ms = np.zeros(2 * K)
        fs = np.zeros(2 * K)
        for t in range(T):
            if p_rel[q, t, 0] >= 0:
                n_top[q] += 1.0
                for k in range(K):
                    b = p_rel[q, t, k] / cut[k]
                    fs[2 * k] += b
                    fs[2 * k + 1] += p_non[q, t, k] / cut[k]
                    loss[q, k] += b - a_rel[q, t, k] / cut[k]
            if m_rel[q, t, 0] >= 0:
                mc += 1.0
                for k in range(K):
                    ms[2 * k] += m_rel[q, t, k] / cut[k]
                    ms[2 * k + 1] += m_non[q, t, k] / cut[k]
        if mc > 0:
            for k in range(2 * K):
                merged[q, k] = ms[k] / mc
        for k in range(2 * K):
            full[q, k] = fs[k] / n_top[q]
    # Lipani: δ per pair, Δ = pandas' compensated group mean per (run, cut-off), λ, estimate
    sumx = np.zeros((n_new, 3 * K))
    comp = np.zeros((n_new, 3 * K))
    nobs = np.zeros((n_new, K), np.int64)
    # Webber & Park: term = full − (full − loss / n) per pair, its mean over R_p
    w_sum = np.zeros((n_new, K))
    w_cnt = np.zeros(n_new)
    for q in range(n_pairs):
        u = pair_u[q]
        if n_top[q] > 0:
            w_cnt[u] += 1.0
            for k in range(K):
                inner = full[q, 2 * k] - loss[q, k] / n_top[q]
                w_sum[u, k] += full[q, 2 * k] - inner
        for k in range(K):
            if not np.isfinite(merged[q, 2 * k]):
                continue
            dP = merged[q, 2 * k] - full[q, 2 * k]
            dA = merged[q, 2 * k + 1] - full[q, 2 * k + 1]
            dk = -dP - dA
            nobs[u, k] += 1
            vals = (dP, dA, dk)
            for c in range(3):
                g = 3 * k + c
                y = vals[c] - comp[u, g]
                tt = sumx[u, g] + y
                comp[u, g] = tt - sumx[u, g] - y
                if comp[u, g] != comp[u, g]:
                    comp[u, g] = 0.0
                sumx[u, g] = tt
    lip = np.full((n_new, K, 6), np.nan)  # k̄, ΔP, ΔP̄, Δk, λ, estimate
    web = np.full((n_new, K, 2), np.nan)  # adjustment, estimate
    for u in range(n_new):
        for k in range(K):
            P, A = own[u, 2 * k], own[u, 2 * k + 1]
            kb = 1.0 - P - A
            if nobs[u, k] > 0:
                mP = sumx[u, 3 * k] / nobs[u, k]
                mA = sumx[u, 3 * k + 1] / nobs[u, k]
                mk = sumx[u, 3 * k + 2] / nobs[u, k]
            else:
                mP = mA = mk = np.nan
            lam = kb * (mP * A - mA * P)
            adj = kb * max(mk, 0.0) if lam > 0 else 0.0
            lip[u, k, 0], lip[u, k, 1], lip[u, k, 2] = kb, mP, mA
            lip[u, k, 3], lip[u, k, 4], lip[u, k, 5] = mk, lam, P + adj
            a = w_sum[u, k] / w_cnt[u]
            if not np.isfinite(a):
                a = 0.0
            web[u, k, 0], web[u, k, 1] = a, P + a
    return merged, loss, lip, web


# --------------------------------------------------------------------------- the two sides
def _cutoffs(problem, measures) -> tuple[np.ndarray, int]:
    from pbtools.measures.names import parse_all

    ms = parse_all(measures)
    if any(m.base != "P" or m.judged_only or m.cutoff is None for m in ms):
        raise ValueError("the reference computes P@n only")
    cut = np.array([m.cutoff for m in ms], dtype=np.int64)
    if (np.diff(cut) <= 0).any():
        raise ValueError("give the P@n in ascending cut-off order")
    rel = {m.rel for m in ms}
    if len(rel) != 1:
        raise ValueError("one relevance level for every measure")
    return cut, int(rel.pop())


def reference(problem, measures=MEASURES, *, tie="exclusive_first", replace=True) -> dict:
    """The pairwise stage of ``problem`` computed by the compiled reference.

    Returns ``merged`` (pairs × 2K: the merged run's P@n, P̄@n means over its topics, NaN
    without one), ``merged_rows`` / ``loss_rows`` (pairs × T × K: per topic the merged P@n,
    P̄@n hit counts and p's Webber & Park loss, NaN where the pair has no such row),
    ``lipani`` (runs × K × 6: k̄, ΔP, ΔP̄, Δk, λ, estimate) and ``webber`` (runs × K × 2:
    adjustment, estimate).
    """
    if njit is None:
        raise SystemExit("the compiled reference needs numba (pip install numba)")
    if problem.topics != "judged" or problem.decimals is not None or problem.weights is not None:
        raise ValueError("the reference covers topics='judged', no rounding, no topic weights")
    cut, rel = _cutoffs(problem, measures)
    enc = problem.enc
    lab = np.ascontiguousarray(problem.lab)
    args = (enc.D, enc.length, lab, problem.present)
    new = problem.new.astype(np.int64)
    var = problem.new_var.astype(np.int64)
    pu, pp = problem.pair_u.astype(np.int64), problem.pair_p.astype(np.int64)
    if (np.diff(pu) < 0).any():
        raise ValueError("pairs must be sorted by the run to score")
    m_rel, m_non, p_rel, p_non, a_rel = _pair_scan(
        *args, new, var, pu, pp, int(problem.depth), cut, rel, tie == "lipani2015", bool(replace)
    )
    own = _run_means(*args, new, var, cut, rel)
    merged, loss, lip, web = _estimates(m_rel, m_non, p_rel, p_non, a_rel, own, pu, len(new), cut)
    with np.errstate(invalid="ignore"):
        b = np.where(p_rel >= 0, p_rel / cut, np.nan)
        loss_t = b - a_rel / cut
        m_rows = np.stack([m_rel / cut, m_non / cut], axis=3).reshape(*m_rel.shape[:2], -1)
    m_rows[m_rel.repeat(2, axis=2) < 0] = np.nan
    return {
        "merged": merged,
        "merged_rows": m_rows,
        "loss_rows": loss_t,
        "lipani": lip,
        "webber": web,
        "own": own,
    }


def estimators(measures=MEASURES, *, tie="exclusive_first", replace=True):
    """pbtools' two pairwise estimators with the reference's choices."""
    from pbtools.corrections.lipani import Lipani
    from pbtools.corrections.webber import WebberOnRuns

    return (
        Lipani(measures=list(measures), tie=tie),
        WebberOnRuns(measures=list(measures), replace=replace),
    )


def pbtools_stage(problem, measures=MEASURES, *, tie="exclusive_first", replace=True):
    """pbtools' pairwise stage on ``problem``: Lipani's and Webber & Park's ``estimate``
    (what an experiment calls per problem), from a cold problem (caches dropped)."""
    from pbtools.measures.names import parse_all

    ms = parse_all(measures)
    problem.forget()
    lip, web = estimators(measures, tie=tie, replace=replace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lip.estimate(problem, ms), web.estimate(problem, ms)


def pbtools_rows(problem, measures=MEASURES, *, tie="exclusive_first", replace=True) -> dict:
    """pbtools' per-(pair, topic) tables, laid out as :func:`reference`'s: the merged runs'
    P@n, P̄@n (:class:`~pbtools.corrections.lipani.SharedMerges`, the table a bootstrap
    replicate reads) and the losses (:func:`~pbtools.corrections.webber_loss.loss_rows`)."""
    from pbtools.measures.names import parse_all

    SharedMerges = _find(
        "SharedMerges", "pbtools.engine.shared_merges", "pbtools.corrections.lipani"
    )
    precision_parts = _find(
        "precision_parts", "pbtools.engine.problem", "pbtools.corrections.problem"
    )
    loss_rows = _find("loss_rows", "pbtools.engine.losses", "pbtools.corrections.webber_loss")

    ms = parse_all(measures)
    enc = problem.enc
    n, K = len(problem.pair_u), len(ms)
    problem.forget()
    parts = precision_parts(ms)
    pa = [m for p in parts for m in p[:2]]
    problem.memoize = True
    try:
        pair, t, vals = SharedMerges(1.0, tie)(problem, pa, max(m.cutoff for m in ms))
    finally:
        problem.memoize = False
    merged = np.full((n, enc.T, 2 * K), np.nan)
    merged[pair, t] = vals
    var_u = problem.new_var[problem.pair_u]
    combo = var_u * enc.R + problem.pair_p
    uc, inv = np.unique(combo, return_inverse=True)
    item, tt, bvals = problem.per_topic(uc % enc.R, uc // enc.R, ms)
    rows, rt, d = loss_rows(problem, ms, replace, (inv.ravel(), item, tt, bvals))
    loss = np.full((n, enc.T, K), np.nan)
    # every row p is averaged over has a loss: 0 where pbtools found nothing lost
    has = problem.topic_rows(problem.pair_p, var_u)
    loss[has] = 0.0
    loss[rows, rt] = d
    problem.forget()
    return {"merged_rows": merged, "loss_rows": loss}


def compare(problem, measures=MEASURES, *, tie="exclusive_first", replace=True) -> dict:
    """Both sides' outputs on ``problem`` and whether each is identical (``==``, NaN = NaN).

    Returns ``{name: (identical, number of differing entries)}`` for the per-(pair, topic)
    tables and every per-run column."""
    ref = reference(problem, measures, tie=tie, replace=replace)
    rows = pbtools_rows(problem, measures, tie=tie, replace=replace)
    lip, web = pbtools_stage(problem, measures, tie=tie, replace=replace)
    K = len(measures)
    got = {
        "merged P@n, P̄@n per (pair, topic)": (rows["merged_rows"], ref["merged_rows"]),
        "Webber & Park loss per (pair, topic)": (rows["loss_rows"], ref["loss_rows"]),
    }
    for i, c in enumerate(("k", "dP", "dAntiP", "dk", "lam", "value")):
        got[f"lipani {c} per run"] = (lip[c].to_numpy().reshape(-1, K), ref["lipani"][:, :, i])
    for i, c in enumerate(("adjustment", "value")):
        got[f"webber {c} per run"] = (web[c].to_numpy().reshape(-1, K), ref["webber"][:, :, i])
    out = {}
    for name, (a, b) in got.items():
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        out[name] = (bool(same.all()) and a.shape == b.shape, int((~same).sum()))
    return out


# --------------------------------------------------------------------------- the benchmark
def leave_org_out_problem(runs, qrels, orgs, pooled, depth):
    """The leave-one-organisation-out problem of the pooled runs (R_p: the pooled runs outside
    the run's organisation; qrels: the pool of the others), as the estimators build it."""
    from_frames = _find("from_frames", "pbtools.engine.build", "pbtools.corrections.problem")
    names = runs["name"].astype(str)
    pool = runs[names.isin(set(map(str, pooled)))]
    return from_frames(pool, pool, qrels, depth=int(depth), orgs=orgs, leave_out="org")


def load_shape(name: str):
    """Frames, pooled runs and depth of a :mod:`shapes` track (the pool inferred as analyze
    does)."""
    from shapes import shape

    from pbtools import io
    from pbtools.pooling.inference import infer_pool

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = io.load_collection([shape(name)], lenient=True)
        info = infer_pool(col.runs, col.qrels)
    return col.runs, col.qrels, col.orgs, info.pooled_runs, int(info.depth)


def timed(fn, *args, **kw):
    """(result, wall s, CPU s of the process)."""
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv=None) -> int:
    from shapes import SHAPES

    from pbtools.threads import limited_threads, usable_cores

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=SHAPES, default="synth129")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-check", action="store_true", help="skip the identity check")
    ap.add_argument(
        "--profile",
        action="store_true",
        help="profile (cProfile, one thread) pbtools' stage once more and print where it spends",
    )
    args = ap.parse_args(argv)
    if njit is None:
        print("numba is not installed: pip install numba", file=sys.stderr)
        return 2
    with open("/proc/loadavg") as fh:
        load = " ".join(fh.read().split()[:3])
    print(f"load average: {load}; usable cores: {usable_cores()}")
    runs, qrels, orgs, pooled, depth = load_shape(args.shape)
    problem = leave_org_out_problem(runs, qrels, orgs, pooled, depth)
    n_rows = int(problem.topic_rows(problem.pair_p, problem.new_var[problem.pair_u]).sum())
    print(
        f"{args.shape}: {len(problem.new)} pooled runs scored leave-one-org-out, depth {depth}, "
        f"{len(problem.pair_u):,} (run, R_p run) pairs, {n_rows:,} (pair × topic) rows, "
        f"{', '.join(MEASURES)}"
    )
    _, w, _ = timed(reference, problem)  # compiles (or loads the cache)
    print(f"  reference warm-up (compile or cache load) {w:.2f} s")
    if not args.no_check:
        res = compare(problem)
        for k, (ok, bad) in res.items():
            print(f"  identical: {k:40s} {'yes' if ok else f'NO ({bad} entries differ)'}")
        if not all(ok for ok, _ in res.values()):
            return 1
    if args.repeat < 1:
        if args.profile:
            profile_stage(problem)
        return 0
    times = {"reference (1 core)": [], "pbtools, all cores": [], "pbtools, 1 thread": []}
    for _ in range(args.repeat):  # interleaved rounds
        times["reference (1 core)"].append(timed(reference, problem)[1:])
        times["pbtools, all cores"].append(timed(pbtools_stage, problem)[1:])
        with limited_threads(1):
            times["pbtools, 1 thread"].append(timed(pbtools_stage, problem)[1:])
    med = {k: tuple(statistics.median(x[i] for x in v) for i in (0, 1)) for k, v in times.items()}
    base = med["reference (1 core)"]
    print(f"  medians of {args.repeat} interleaved rounds (wall s, CPU s; ÷ reference)")
    for k, (w, c) in med.items():
        print(
            f"    {k:22s} {w:7.2f} wall {c:7.2f} cpu   {w / base[0]:5.2f}× wall "
            f"{c / base[1]:5.2f}× cpu"
        )
    per = base[1] / max(n_rows, 1) * 1e6
    print(f"  reference: {per:.2f} µs CPU per (pair × topic) row (both estimators)")
    if args.profile:
        profile_stage(problem)
    return 0


def profile_stage(problem, top: int = 14) -> None:
    """pbtools' stage on one thread under cProfile: the functions by own time."""
    import cProfile
    import io
    import pstats

    from pbtools.threads import limited_threads

    prof = cProfile.Profile()
    with limited_threads(1):
        prof.enable()
        pbtools_stage(problem)
        prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    lines = buf.getvalue().splitlines()
    start = next((i for i, x in enumerate(lines) if x.lstrip().startswith("ncalls")), 0)
    print("  pbtools' stage, one thread, by own time (cProfile):")
    for line in lines[start:]:
        if line.strip():
            print("    " + line.rstrip()[:150])


if __name__ == "__main__":
    sys.exit(main())
