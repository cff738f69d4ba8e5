"""Lipani, Lupu & Hanbury (2015): the paper's claims (:data:`CLAIMS`), declared from the paper alone
before any data, with the constants their criteria read and the numbers the paper reports.

The verdicts on a run's frames are :func:`pbtools.papers.lipani2015_claims.claims_table`;
:mod:`pbtools.papers.lipani2015_claims` re-exports every name declared here.
"""

from __future__ import annotations

from pbtools.papers.claims import Claim, declared

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
