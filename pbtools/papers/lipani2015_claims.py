"""The claims of Lipani, Lupu & Hanbury (2015), declared from the paper before any data, and
their verdicts on the outputs of :mod:`pbtools.papers.lipani2015`.

Every claim is a :class:`~pbtools.papers.claims.Claim` in :data:`CLAIMS`: the paper's words
and section, the quantity computed and the criterion (with its reading of the paper's wording).
The per-collection claims are checked by :func:`claims_table` on each track; the claims about
the paper's fifteen collections (W1, W3, G1) by :func:`across` over every track given, and are
n.a. ("needs ≥ k collections") below their ``min_collections``. The verdict functions take the
result frames only, so tests can construct results whose truth is known.

The declarations (:data:`CLAIMS`, the constants and the paper's own numbers) are in
:mod:`pbtools.papers.lipani2015_catalogue`, re-exported here; this module computes the verdicts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools import stats
from pbtools.measures import round_half_up
from pbtools.papers.claims import Claims, num, share
from pbtools.papers.lipani2015_catalogue import (  # noqa: F401  (re-exported: the catalogue)
    ALPHA,
    CLAIMS,
    ESTIMATORS,
    PAPER,
    PAPER_ADHOC2,
    PAPER_FIG2,
)
from pbtools.stats.estimator_table import TOP, WORST


def compare_adhoc2(table: pd.DataFrame) -> tuple[int, list[str]]:
    """How many of the 30 MAE and SRE values of the TREC-2 top-75 % leave-one-org-out rows
    equal the paper's (MAE to 4 decimals), and the cells that differ."""
    t = table[(table["runs"] == "top75") & table["track"].str.endswith("TREC-2/Adhoc")]
    if "by" in t.columns:
        t = t[t["by"] == "org"]
    equal, bad = 0, []
    for (est, n), (mae, sre, _) in PAPER_ADHOC2.items():
        row = t[(t["estimator"] == est) & (t["n"] == n)]
        if row.empty:
            bad.append(f"{est} P@{n}: missing")
            continue
        got_mae, got_sre = float(row["mae"].iloc[0]), int(row["sre"].iloc[0])
        same = (f"{got_mae:.4f}" == f"{mae:.4f}", got_sre == sre)
        equal += sum(same)
        if not all(same):
            bad.append(f"{est} P@{n}: pbtools {got_mae:.4f}/{got_sre}, paper {mae:.4f}/{sre}")
    return equal, bad


def _top(t2: pd.DataFrame) -> pd.DataFrame:
    """Table 2's rows: top 75 %, leave-one-organization-out, MAE rounded to 4 decimals (as the
    paper prints and compares it)."""
    top = t2[(t2["runs"] == "top75") & (t2["by"] == "org")]
    return top.assign(mae=round_half_up(top["mae"].to_numpy(dtype=float), 4))


def _counts(top: pd.DataFrame) -> dict:
    """Top / worst performer counts of :func:`pbtools.stats.estimator_table`."""
    lay = stats.table2(top.drop(columns=["by", "measure"]), estimators=list(ESTIMATORS))
    return {"top": lay.loc[(TOP, "")], "worst": lay.loc[(WORST, "")]}


def _wins(top: pd.DataFrame, a: str, b: str, errors=("mae", "sre", "sre_star")):
    """``(wins, losses)`` of estimator ``a`` against ``b`` over every (track, n, error)."""
    v = top.set_index(["track", "n", "estimator"])
    wins = losses = 0
    for e in errors:
        x = v.xs(a, level="estimator")[e]
        y = v.xs(b, level="estimator")[e].reindex(x.index)
        wins += int((x < y).sum())
        losses += int((x > y).sum())
    return wins, losses


def majority(k: int, n: int) -> bool | None:
    """'A majority': more than half of ``n`` (None for n = 0).

    >>> majority(3, 5), majority(2, 4), majority(0, 0)
    (True, False, None)
    """
    return None if n == 0 else k > n / 2


def _track_claims(c: Claims, top: pd.DataFrame, t2: pd.DataFrame, track: str, protocol) -> None:
    ns = sorted(top["n"].unique())
    v = top.set_index(["estimator", "n"]).sort_index()
    if track.endswith("TREC-2/Adhoc"):
        ok, _ = compare_adhoc2(t2)
        c.check(
            CLAIMS["T2"],
            f"{ok} of 30 equal",
            ok == 30,
            "under the lipani2015 protocol (PROTOCOL-lipani2015.md)"
            if protocol == "lipani2015"
            else "the principled defaults depart from the paper's choices; run with "
            "--protocol lipani2015 to reproduce",
        )
        star = [
            f"{e} P@{n} {int(v.loc[(e, n), 'sre_star'])} ({PAPER_ADHOC2[(e, n)][2]})"
            for e in ESTIMATORS
            for n in ns
            if (e, n) in PAPER_ADHOC2 and int(v.loc[(e, n), "sre_star"]) != PAPER_ADHOC2[(e, n)][2]
        ]
        c.check(
            CLAIMS["T2s"],
            f"{15 - len(star)} of 15 equal; differ: {'; '.join(star)}" if star else "15 of 15",
            None,
            "the paper names Tukey's HSD but not its design, and its p-values are not "
            "published: analyze --sre-pvalues DIR reproduces the column from them",
        )
    cnt = _counts(top)
    n_tests = 3 * len(ns)
    worst = sum(int(cnt["worst"][("lipani", m)]) for m in ("MAE", "SRE", "SRE*"))
    c.check(CLAIMS["W2"], f"{worst} of {n_tests}", worst <= max(1, round(0.05 * n_tests)))
    damaged = [
        n for n in ns if v.loc[("lipani", n), "sre_star"] > v.loc[("reduced", n), "sre_star"]
    ]
    c.check(
        CLAIMS["W4"],
        "SRE* lipani/reduced: "
        + ", ".join(
            f"P@{n} {int(v.loc[('lipani', n), 'sre_star'])}/"
            f"{int(v.loc[('reduced', n), 'sre_star'])}"
            for n in ns
        ),
        not damaged,
    )
    better = [
        n
        for n in ns
        if v.loc[("lipani", n), "mae"] <= v.loc[("reduced", n), "mae"]
        and v.loc[("lipani", n), "sre"] <= v.loc[("reduced", n), "sre"]
    ]
    c.check(
        CLAIMS["W5"],
        "MAE lipani/reduced: "
        + ", ".join(
            f"P@{n} {num(v.loc[('lipani', n), 'mae'], 4)}/{num(v.loc[('reduced', n), 'mae'], 4)}"
            for n in ns
        ),
        len(better) == len(ns),
        f"no worse at {share(len(better), len(ns))} cut-offs",
    )
    allr = t2[(t2["runs"] == "all") & (t2["estimator"] == "reduced")].set_index(["by", "n"])
    if {"run", "org"} <= set(allr.index.get_level_values(0)):
        cons = [n for n in ns if allr.loc[("run", n), "mae"] < allr.loc[("org", n), "mae"]]
        c.check(
            CLAIMS["W6"],
            "reduced-pool MAE run/org: "
            + ", ".join(
                f"P@{n} {num(allr.loc[('run', n), 'mae'], 4)}/{num(allr.loc[('org', n), 'mae'], 4)}"
                for n in ns
            ),
            len(cons) == len(ns),
        )


def _sweep_claims(c: Claims, top: pd.DataFrame, sweep: pd.DataFrame) -> None:
    ns = sorted(top["n"].unique())
    v = top.set_index(["estimator", "n"]).sort_index()
    sw = sweep[sweep["runs"] == "top75"]
    sw = sw.assign(mae=round_half_up(sw["mae"].to_numpy(dtype=float), 4))  # as Table 2's
    sw = sw.set_index(["estimator", "n"]).sort_index()
    names = set(sw.index.get_level_values(0))
    alphas = sorted(
        float(e.split("=")[1].rstrip(")")) for e in names if e.startswith("lipani(alpha=")
    )
    if 0.0 in alphas:
        same = [
            n
            for n in ns
            if abs(sw.loc[("lipani(alpha=0)", n), "mae"] - v.loc[("reduced", n), "mae"]) < 1e-12
        ]
        c.check(
            CLAIMS["A1"],
            f"MAE(α = 0) = MAE(reduced pool) at {share(len(same), len(ns))} cut-offs",
            len(same) == len(ns),
        )
    if len(alphas) > 2:
        best = []
        for n in ns:
            red = v.loc[("reduced", n), "mae"]
            eff = {a: abs(sw.loc[(f"lipani(alpha={a:g})", n), "mae"] - red) for a in alphas}
            if eff[max(alphas)] >= max(eff.values()) - 1e-12:
                best.append(n)
        c.check(
            CLAIMS["A2"],
            f"largest |MAE change| at α = 1 for {share(len(best), len(ns))} cut-offs",
            len(best) == len(ns),
        )
    lam = {n: v.loc[("lipani", n)] for n in ns}
    rivals = [i for i in ("dP", "dAntiP") if f"lipani(indicator={i})" in names]
    if rivals:
        lose = [
            f"{i} P@{n} {num(sw.loc[(f'lipani(indicator={i})', n), 'mae'], 4)} < λ "
            f"{num(lam[n]['mae'], 4)}"
            for i in rivals
            for n in ns
            if sw.loc[(f"lipani(indicator={i})", n), "mae"] < lam[n]["mae"] - 1e-12
        ]
        total = len(rivals) * len(ns)
        c.check(
            CLAIMS["I1"],
            f"λ's MAE is lowest in {total - len(lose)} of {total} comparisons"
            + (f"; not: {'; '.join(lose)}" if lose else ""),
            not lose,
        )
    if "lipani(indicator=always)" in names:
        worse, better = [], 0
        for n in ns:
            alw = sw.loc[("lipani(indicator=always)", n)]
            for e in ("mae", "sre"):
                if lam[n][e] > alw[e] + 1e-12:
                    worse.append(f"{e.upper()}@{n}")
                elif lam[n][e] < alw[e] - 1e-12:
                    better += 1
        c.check(
            CLAIMS["I2"],
            f"λ better than always correcting in {better}, worse in {len(worse)} of "
            f"{2 * len(ns)} comparisons" + (f" ({', '.join(worse)})" if worse else ""),
            not worse and better > 0,
        )


def lambda_residual(scores: pd.DataFrame, n: int = 10) -> tuple[float, float, int]:
    """L1's quantity: Spearman's ρ between λ@n and the residual (true − reduced-pool P@n) of
    the left-out runs (Lipani estimator, leave-one-organization-out, all runs), its one-sided
    p-value (ρ > 0) and the number of runs; NaN when undefined (fewer than 3 runs, or a
    constant λ or residual).

    ``scores``: ``n``, ``estimator``, ``runs``, ``true``, ``P`` (reduced-pool score), ``lam``
    (and ``by``), as ``scores.parquet``.
    """
    from scipy.stats import spearmanr

    s = scores[(scores["estimator"] == "lipani") & (scores["runs"] == "all") & (scores["n"] == n)]
    if "by" in s.columns:
        s = s[s["by"] == "org"]
    resid = (s["true"] - s["P"]).to_numpy(dtype=float)
    lam = s["lam"].to_numpy(dtype=float)
    if len(s) < 3 or np.ptp(resid) == 0 or np.ptp(lam) == 0:
        return float("nan"), float("nan"), len(s)
    r = spearmanr(lam, resid, alternative="greater")
    return float(r.statistic), float(r.pvalue), len(s)


def _lambda_claim(c: Claims, scores: pd.DataFrame) -> None:
    rho, p, k = lambda_residual(scores)
    if np.isnan(rho):
        s = scores[(scores["estimator"] == "lipani") & (scores["runs"] == "all")]
        s = s[s["n"] == 10]
        if "by" in s.columns:
            s = s[s["by"] == "org"]
        if k < 3:
            why = f"{k} left-out runs at P@10: a rank correlation needs at least 3"
        elif np.ptp((s["true"] - s["P"]).to_numpy(dtype=float)) == 0:
            why = "no left-out run loses score to pool bias (every residual is 0): nothing to flag"
        else:
            why = f"λ@10 is the same ({num(s['lam'].iloc[0], 4)}) for every run: no ranking"
        c.check(CLAIMS["L1"], f"{k} runs", None, why)
        return
    c.check(CLAIMS["L1"], f"ρ = {rho:.2f} (one-sided p {p:.3f}, {k} runs)", rho > 0 and p < ALPHA)


def claims_table(result: dict, track: str, protocol) -> pd.DataFrame:
    """The per-collection claims of :data:`CLAIMS` checked on one track's ``result``
    (``table2``, ``sweep``, ``scores``)."""
    c = Claims(PAPER, track)
    t2 = result["table2"].assign(track=track)
    top = _top(t2)
    _track_claims(c, top, t2, track, protocol)
    _sweep_claims(c, top, result["sweep"])
    _lambda_claim(c, result["scores"])
    c.check(
        CLAIMS["R1"], "", None, "needs the TREC 2005 Robust track, which the data do not include"
    )
    return c.frame()


def across(res: dict) -> pd.DataFrame:
    """The claims about several collections (W1, W3, G1), checked across every track of
    ``res`` (``table2``, ``gtheory``): one row each, track ``"<k> collections"``; n.a. below
    each claim's ``min_collections``."""
    from scipy.stats import spearmanr

    t2 = res["table2"]
    k = int(t2["track"].nunique())
    c = Claims(PAPER, f"{k} collection{'s' if k != 1 else ''}")
    top = _top(t2)
    beats = {r: _wins(top, "lipani", r) for r in ("reduced", "webber")}
    c.check(
        CLAIMS["W1"],
        "; ".join(f"vs {r}: better in {w}, worse in {lo}" for r, (w, lo) in beats.items()),
        all(majority(w, w + lo) for w, lo in beats.values()),
        collections=k,
    )
    w, lo = _wins(top, "webber", "reduced", errors=("mae", "sre"))
    c.check(
        CLAIMS["W3"],
        f"Webber worse than the reduced pool in {lo}, better in {w} MAE/SRE tests",
        majority(lo, w + lo),
        collections=k,
    )
    gt = res["gtheory"]
    parts, ok = [], True
    for n, _paper in PAPER_FIG2.items():
        g = gt[gt["n"] == n].dropna(subset=["mae_change_pct"])
        if len(g) < 3:
            ok = None
            continue
        re = spearmanr(g["e_rho2"], g["mae_change_pct"]).statistic
        rp = spearmanr(g["phi"], g["mae_change_pct"]).statistic
        parts.append(f"P@{n}: Eρ² {re:.2f}, Φ {rp:.2f}")
        if n == 10:
            ok = ok and bool(0 < re < 0.7 and 0 < rp < 0.7)
        else:
            ok = ok and bool(abs(re) < 0.3 and abs(rp) < 0.3)
    c.check(CLAIMS["G1"], "; ".join(parts), ok if parts else None, collections=k)
    return c.frame()
