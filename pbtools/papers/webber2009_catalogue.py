"""Webber & Park (2009): the paper's claims (:data:`CLAIMS`), declared from the paper alone
before any data, with the constants their criteria read and the numbers the paper reports.

The verdicts on a run's frames are :func:`pbtools.papers.webber2009_claims.claims_table`;
:mod:`pbtools.papers.webber2009_claims` re-exports every name declared here.
"""

from __future__ import annotations

from pbtools.papers.claims import Claim, declared

PAPER = "Webber & Park 2009"
#: the per-doubling factor band of "roughly halving" (F1c): exponent b rounds to 1
HALVING = (2**-1.5, 2**-0.5)
#: level of the sign test of "as likely to over- as to underestimate" (T1b)
SIGN_ALPHA = 0.05
#: the pool width and number of common topics the paper quotes for Table 3 (T3a) and Table 4
PAPER_WIDTH, PAPER_COMMON = 2, 10

NO_MANUAL = (
    "no manual runs given (--manual RUN,...; the TREC desc.xml has no manual/automatic field): "
    "the paper's TREC-8 manual runs are the unpooled systems of this claim"
)

CLAIMS = declared(
    Claim(
        "F1a",
        "§2.2, Figure 1",
        "assuming unassessed documents to be irrelevant is biased against the unpooled system",
        "mean over the repeats of r's mean RBP(p=0.8)@10 on the pool of S minus on the full "
        "qrels, per pool width",
        "holds if the mean bias is < 0 at every pool width (the paper states it without exception)",
        "mean bias < 0 at every width (Figure 1)",
    ),
    Claim(
        "F1b",
        "§2.2, Figure 1",
        "using condensed lists is biased in favour of the unpooled system",
        "the same bias with condensed lists",
        "holds if the mean bias is > 0 at every pool width",
        "mean bias > 0 at every width (Figure 1)",
    ),
    Claim(
        "F1c",
        "§2.2",
        "for assumed irrelevance, the bias steadily decreases as the pool width increases, "
        "roughly halving when the pool width is doubled",
        "|mean bias| (assumed irrelevance) per width; the per-doubling factor 2^−b of the "
        "least-squares fit log2|bias| = c − b·log2 w",
        "'steadily decreases' = |bias| falls at every wider width; 'roughly halving' = bias ∝ "
        "w^−b with the fitted b rounding to 1 (not 0: no decline, not 2: quartering), i.e. a "
        "per-doubling factor in [0.354, 0.707); holds if both; n.a. with fewer than 2 widths",
        "×0.5 per doubling",
    ),
    Claim(
        "F1d",
        "§2.2",
        "condensed lists have less bias than assumed irrelevance for small numbers of pooled "
        "systems, but assumed irrelevance has less bias for larger ones",
        "|mean bias| of both at the narrowest and the widest width",
        "holds if condensed lists are less biased at the narrowest width and assumed "
        "irrelevance less at the widest",
        "crossover between the narrowest and widest pools (Figure 1)",
    ),
    Claim(
        "F1e",
        "§2.2",
        "for wide pools the distribution is quite skewed (mean is close to third quartile)",
        "mean, median and quartiles of the underestimate (true − partial, assumed irrelevance) "
        "at the widest width",
        "holds if the mean is closer to the third quartile than to the median (the skew the "
        "paper describes)",
        "mean ≈ Q3 at wide pools (Figure 1)",
    ),
    Claim(
        "T1a",
        "§3.1, Table 1 (left)",
        "[leave-one-out] adjustment leads to much greater accuracy of scores, particularly with "
        "smaller pools",
        "MAE of the unadjusted and the Algorithm 1 adjusted mean score of r, per width",
        "holds if the adjusted MAE is lower at every width and its relative reduction is larger "
        "at the narrowest width than at the widest ('particularly with smaller pools'); 'much' "
        "is not quantified",
        "adjusted MAE below unadjusted at every pool size",
    ),
    Claim(
        "T1b",
        "§3.1",
        "in addition, it [the adjusted score] is unbiased (as likely to over as to underestimate)",
        "share of the system samples whose adjusted score exceeds the true score",
        "'as likely' = share 1/2: holds if a two-sided sign test (binomial, α = 0.05) over the "
        "system samples with an estimate does not reject it",
        "unbiased",
    ),
    Claim(
        "T1c",
        "§3.1",
        "the unadjusted scores are all underestimates",
        "system samples whose unadjusted score is at most the true score",
        "holds if every sample underestimates (or equals) the true score; unjudged = irrelevant "
        "can only lower RBP, so this holds by construction",
        "all",
    ),
    Claim(
        "T1m",
        "§3.1, Table 1 (right)",
        "[for manual runs unpooled, automatic runs pooled] while leave-one-out adjustment helps, "
        "there is still a strong error, even with large pool sizes",
        "MAE of unadjusted and adjusted (Algorithm 1) scores with r a manual run and S pooled "
        "automatic runs, per width",
        "'helps' = adjusted MAE below unadjusted at every width; 'still a strong error, even "
        "with large pool sizes' = at the widest width the adjusted MAE for manual runs exceeds "
        "the adjusted MAE for randomly drawn runs (Table 1 left) at the narrowest width: no pool "
        "size brings it to what the method achieves on homogeneous systems; holds if both",
        "",
    ),
    Claim(
        "T2a",
        "§4.2, Table 2",
        "for narrow pools, score adjustment offers a marked improvement over unadjusted scores, "
        "even for a handful of topics in the common topic set; as the pool width increases "
        "adjustment still improves accuracy",
        "MAE of adjusted (Algorithm 2) and unadjusted scores, unjudged = irrelevant, per (width, "
        "number of common topics n)",
        "holds if the adjusted MAE is lower in every (width, n) cell",
        "lower MAE for every width and number of common topics",
    ),
    Claim(
        "T2b",
        "§4.2, Table 2",
        "the true scores of the common topics are mixed with the unadjusted scores ... necessary "
        "for a fair comparison [of the adjusted scores' improvement]",
        "MAE of adjusted and mixed scores per (width, n)",
        "holds if the adjusted MAE is lower than the mixed MAE in every (width, n) cell",
        "lower MAE than mixed",
    ),
    Claim(
        "T2c",
        "§4.2",
        "the error of adjusted scores is proportional to √((N − n)/(n·N)), as the analysis "
        "predicts (the analysis predicts RMSE; it holds of MAE as well)",
        "RMSE ratio of the adjusted scores from the fewest to the most common topics, per width",
        "holds if at every width the observed ratio is nearer (in log) to the predicted "
        "√((N − n)/(nN)) ratio than to the mixed scores' (N − n)/N ratio and to 1 (no decline): "
        "the rate law the paper states fits better than the one it contrasts it with; n.a. with "
        "one n",
        "ratio √((N−n)/(nN))",
    ),
    Claim(
        "T2d",
        "§4.2",
        "the error of the unadjusted scores, with true scores mixed in, declines at a slower "
        "rate [than that of the adjusted scores]",
        "MAE ratio from the fewest to the most common topics, mixed vs adjusted, per width",
        "holds if the mixed ratio exceeds the adjusted one at every width; n.a. with one n",
        "mixed ∝ (N − n)/N",
    ),
    Claim(
        "T2e",
        "§4.2",
        "as the pool width increases, the error of the unadjusted scores decreases, and while "
        "adjustment still improves accuracy, the relative benefit for the same number of common "
        "topics is decreased",
        "unadjusted MAE per width; relative MAE reduction 1 − adjusted/unadjusted per (width, n)",
        "holds if the unadjusted MAE falls at every wider width and, for every n, the relative "
        "reduction at the widest width is below that at the narrowest",
        "decreasing benefit with width",
    ),
    Claim(
        "T3a",
        "§4.2, Table 3",
        "[condensed lists] for a pool width of 2, the unadjusted scores are more accurate than "
        "the adjusted scores with 10 common topics",
        "condensed-list MAE, unadjusted vs adjusted, w = 2, n = 10",
        "holds if the unadjusted MAE is lower; n.a. unless width 2 and 10 common topics were run",
        "unadjusted MAE < adjusted (n = 10) at w = 2",
    ),
    Claim(
        "T3b",
        "§4.2",
        "[condensed lists] as the pool width increases the adjusted scores become more reliable",
        "condensed-list MAE, unadjusted vs adjusted, at the widest width, n = 10 (or the middle n)",
        "holds if the adjusted MAE is lower than the unadjusted at the widest width",
        "adjusted MAE < unadjusted at wide pools",
    ),
    Claim(
        "E1",
        "§4.1",
        "of the 500 randomly-sampled system sets, in not one is the variance of true scores less "
        "than the MSE of adjusted scores, either with unassessed documents assumed irrelevant or "
        "condensed lists",
        "system sets with σ²_t < σ²_a (Eqs. 3 and 5), either kind of list",
        "holds if there is none",
        "0 of 500 system sets",
    ),
    Claim(
        "T4",
        "§4.2, Table 4",
        "[manual runs unpooled] the error of the estimate with only 10 common topics and 2 "
        "pooled systems is well under half that of the unadjusted score with 40 pooled systems",
        "MAE with r a manual run: adjusted (Algorithm 2, unjudged = irrelevant) at w = 2, n = 10 "
        "vs unadjusted at the widest width",
        "holds if the adjusted MAE is below half the unadjusted ('well' is not quantified); n.a. "
        "unless manual runs, width 2 and 10 common topics were run",
        "",
    ),
)
