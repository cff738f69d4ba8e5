"""The claims of Lipani, Lupu & Hanbury (2015), declared from the paper before any data, and
their verdicts on the outputs of :mod:`pbtools.papers.lipani2015`.

Every claim is a :class:`~pbtools.papers.claims.Claim` in :data:`CLAIMS`: the paper's words
and section, the quantity computed and the criterion (with its reading of the paper's wording).
The per-collection claims are checked by :func:`claims_table` on each track; the claims about
the paper's fifteen collections (W1, W3, G1) by :func:`across` over every track given, and are
n.a. ("needs ≥ k collections") below their ``min_collections``. The verdict functions take the
result frames only, so tests can construct results whose truth is known.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools import stats
from pbtools.measures import round_half_up
from pbtools.papers.claims import Claim, Claims, declared, num, share
from pbtools.stats.table2 import TOP, WORST

PAPER = "Lipani et al. 2015"
ESTIMATORS = ("lipani", "webber", "reduced")
#: Table 2 of the paper, "Ad Hoc 2" rows (top 75 %): (MAE, SRE, SRE*) per estimator and n
PAPER_ADHOC2 = {
    ("lipani", 5): (0.0063, 19, 0),
    ("lipani", 10): (0.0082, 32, 0),
    ("lipani", 20): (0.0132, 50, 0),
    ("lipani", 30): (0.0149, 51, 0),
    ("lipani", 100): (0.0216, 88, 2),
    ("webber", 5): (0.0069, 18, 0),
    ("webber", 10): (0.0084, 27, 0),
    ("webber", 20): (0.0119, 48, 0),
    ("webber", 30): (0.0129, 42, 0),
    ("webber", 100): (0.0169, 61, 2),
    ("reduced", 5): (0.0065, 19, 0),
    ("reduced", 10): (0.0085, 32, 0),
    ("reduced", 20): (0.0138, 52, 0),
    ("reduced", 30): (0.0164, 56, 0),
    ("reduced", 100): (0.0293, 122, 4),
}
#: the paper's Figure 2 Spearman correlations (P@10, P@100) of the MAE change with Eρ², Φ
PAPER_FIG2 = {10: (0.48, 0.36), 100: (0.17, 0.09)}
#: the significance level of the claims that test an association (one-sided)
ALPHA = 0.05

CLAIMS = declared(
    Claim(
        "T2",
        "§5.1, Table 2",
        "MAE and SRE of the three methods on Ad Hoc 2 (TREC-2), top 75 %, "
        "leave-one-organization-out, P@5-P@100",
        "the 30 MAE (4 decimals) and SRE values of the Ad Hoc 2 rows",
        "holds if all 30 equal the paper's (only on TREC-2/Adhoc)",
        "30 values",
    ),
    Claim(
        "T2s",
        "§5.1, Table 2",
        "SRE* (reversals of significantly different pairs, Tukey's HSD) on Ad Hoc 2",
        "SRE* of the 15 Ad Hoc 2 cells",
        "compared, not tested: the paper's p-values are not published",
        "0-4 per cell",
    ),
    Claim(
        "W1",
        "§5.1",
        "our method, in a majority of cases outperforms the reduced pool and the Webber method",
        "over every collection, n and error (MAE to 4 decimals, SRE, SRE*; top 75 %): the tests "
        "where Lipani's error is lower than each rival's",
        "'a majority' = more than half: holds if, against each rival, Lipani is strictly "
        "better in more than half of the tests that are not ties (ties not counted, as the "
        "paper counts)",
        "top performer in 46/75 MAE, 35/75 SRE, 20/75 SRE* tests (15 collections)",
        min_collections=2,
    ),
    Claim(
        "W2",
        "§5.1",
        "of the 675 tests summarized in Table 2, the proposed method obtains the worst "
        "performer mark exactly three times",
        "how often Lipani has the strictly worst MAE, SRE or SRE* (top 75 %)",
        "'exactly three of 675' read as rarely: holds if worst in at most 5 % of the tests "
        "(at least 1 allowed)",
        "2 MAE + 3 SRE + 1 SRE* of 225 (15 collections)",
    ),
    Claim(
        "W3",
        "§5.1",
        "the competing method is significantly more aggressive in its bias correction. In the "
        "majority of the cases it obtains worse system scores and rankings when compared to "
        "[...] the reduced pool",
        "over every collection and n: the MAE and SRE tests (top 75 %) where Webber & Park "
        "errs more than the reduced pool",
        "'the majority' = more than half of the tests that are not ties",
        "worst performer 26/75 MAE, 18/75 SRE (15 collections)",
        min_collections=2,
    ),
    Claim(
        "W4",
        "§5.1, §6",
        "it gets worse scores exactly once on SRE* (Medical 2011, P@100)",
        "SRE* of Lipani against the reduced pool at each n (top 75 %)",
        "holds if Lipani's SRE* ≤ the reduced pool's at every n",
        "worse once in 75",
    ),
    Claim(
        "W5",
        "Abstract",
        "we observe a reduction in system ranking error and absolute score difference error",
        "MAE and SRE of Lipani against the reduced pool at each n (top 75 %)",
        "holds if both are no worse at every n",
        "Ad Hoc 2: lower or equal MAE and SRE at every n",
    ),
    Claim(
        "W6",
        "§5",
        "leave-one-run-out is more conservative than leave-one-organization-out",
        "the reduced pool's MAE leaving one run out and one organization out (all runs)",
        "holds if leaving one run out errs less at every n",
        "stated",
    ),
    Claim(
        "A1",
        "§5.1",
        "with α = 0, the method no longer makes any change to the existing runs",
        "MAE of Lipani with α = 0 and of the reduced pool (top 75 %)",
        "holds if equal at every n",
        "stated",
    ),
    Claim(
        "A2",
        "§5.1",
        "this effect grows [...] with α and in the following we shall report the maximum "
        "effects, obtained for α = 1",
        "|MAE(α) − MAE(reduced pool)| for each α of the sweep (top 75 %)",
        "holds if the largest at α = 1 at every n",
        "maximum effects at α = 1",
    ),
    Claim(
        "I1",
        "§5.1",
        "replacing λ with ΔP or ΔP̄ [...] we consistently observe lower performance compared with λ",
        "MAE of Lipani with λ, ΔP > 0 and ΔP̄ < 0 as the trigger (top 75 %)",
        "'consistently' = in every comparison: holds if λ's MAE is no higher than ΔP's and "
        "ΔP̄'s at every n",
        "stated",
    ),
    Claim(
        "I2",
        "§1, contribution 2",
        "an indicator to trigger bias correction only when it is indeed necessary",
        "MAE and SRE of Lipani with λ as the trigger and with correcting always (top 75 %)",
        "holds if λ errs no more than 'always' in every comparison (MAE and SRE at each n) and "
        "less in at least one: an indicator that never changes the outcome triggers nothing",
        "stated",
    ),
    Claim(
        "L1",
        "§3.2, Figure 1",
        "when ΔP̄ < 0 and ΔP > 0 the run suffers from pool bias and its score should be "
        "adjusted [...] we derive a single value indicator λ",
        "Spearman's ρ between λ@10 and the residual (true − reduced-pool P@10) of the left-out "
        "runs, leave-one-organization-out, all runs (Figure 1's setting)",
        f"holds if ρ > 0 with one-sided p < {ALPHA}: a larger λ goes with a larger loss to pool "
        "bias",
        "stated (Figure 1: no correlation given)",
    ),
    Claim(
        "G1",
        "§5.2, Figure 2",
        "Spearman's rank correlation [of the MAE change with] Eρ² is 0.48 and Φ 0.36 for P@10; "
        "0.17 and 0.09 for P@100",
        "Spearman's ρ over the collections of the MAE change (Lipani vs the reduced pool, top "
        "75 %) with Eρ² and Φ of the true P@10 and P@100",
        "holds if, for P@10, both ρ are positive and below .7 (a weak positive correlation), "
        "and, for P@100, both |ρ| < .3",
        "P@10: .48 / .36; P@100: .17 / .09 (15 collections)",
        min_collections=4,
    ),
    Claim(
        "R1",
        "§3.2, Table 1, Figure 1",
        "when left out, the routing run sab05ror1 (Robust 2005) has P@10 .4220, k@10 .444, "
        "ΔP@10 .0065, ΔP̄@10 −.1053, and λ sets it apart",
        "the indicators of sab05ror1",
        "needs the TREC 2005 Robust track",
        ".4220 / .444 / .0065 / −.1053",
    ),
)


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
    """Top / worst performer counts of :func:`pbtools.stats.table2`."""
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
