"""Sakai (2008): the paper's claims (:data:`CLAIMS`), declared from the paper alone before any
data, with the constants their criteria read and the numbers the paper reports.

The verdicts on a run's frames are :func:`pbtools.papers.sakai2008_claims.claims_table`;
:mod:`pbtools.papers.sakai2008_claims` re-exports every name declared here.
"""

from __future__ import annotations

import numpy as np

from pbtools.papers.claims import Claim, declared

PAPER = "Sakai 2008"
#: the nine metrics in the paper's column order
LABELS = ("AP'", "Q'", "nDCG'", "RBP'", "bpref", "AP", "Q", "nDCG", "RBP")
CONDENSED = ("AP'", "Q'", "nDCG'", "RBP'", "bpref")
TRADITIONAL = ("AP", "Q", "nDCG", "RBP")
PAIRS = (("AP'", "AP"), ("Q'", "Q"), ("nDCG'", "nDCG"), ("RBP'", "RBP"))
#: "very high" Kendall's τ (T5)
VERY_HIGH_TAU = 0.9

#: Sakai's Table 3 (NTCIR-6J, leave-one-team-out): score change (%) per team, metrics as LABELS
PAPER_TABLE3 = np.array(
    [
        [1.93, 1.49, 0.42, 1.12, 2.39, -0.61, -0.51, -0.27, -0.34],
        [2.04, 1.76, 0.59, 0.63, 2.34, -0.06, 0.03, 0.05, -0.16],
        [0.85, 0.62, 0.21, 0.49, 1.28, -0.14, -0.11, -0.08, -0.04],
        [1.03, 0.93, 0.37, 0.38, 1.13, 0.00, 0.00, -0.03, -0.42],
        [1.64, 1.34, 0.54, 1.88, 2.14, -0.40, -0.38, -0.24, -0.39],
        [3.76, 3.37, 1.33, 1.05, 3.60, 1.43, 1.41, 0.65, -0.08],
        [6.13, 4.83, 1.81, 4.04, 6.48, -0.50, -0.30, -0.07, -0.47],
        [0.73, 0.59, 0.26, 0.35, 0.68, 0.00, -0.04, 0.01, -0.06],
        [1.01, 0.77, 0.32, 0.73, 1.43, 0.08, 0.10, 0.02, -0.03],
        [0.12, 0.07, 0.00, 0.07, 0.19, -0.08, -0.07, -0.08, 0.00],
    ]
)
#: Sakai's Tables 6 and 9 (TREC03): discriminative power (%) and misses + false alarms
PAPER_POWER = {
    "full": dict(zip(LABELS, (64.2, 64.2, 59.2, 45.8, 57.5, 64.2, 66.7, 59.2, 45.8), strict=True)),
    "take_one_team": dict(
        zip(LABELS, (59.6, 59.0, 54.4, 43.1, 51.7, 66.4, 67.6, 61.6, 52.6), strict=True)
    ),
    "take_three_teams": dict(
        zip(LABELS, (61.7, 62.5, 55.0, 42.5, 55.8, 67.5, 68.3, 63.3, 49.2), strict=True)
    ),
    "pd=10": dict(zip(LABELS, (60.8, 58.3, 58.3, 36.7, 54.2, 63.3, 68.3, 59.2, 46.7), strict=True)),
}
#: Table 6 (TREC03): misses + false alarms, take-one-team (mean) and take-three-teams
PAPER_ERRORS = {
    "take_one_team": (11.34, 12.83, 12.09, 15.25, 10.66, 14.0, 12.08, 12.25, 14.42),
    "take_three_teams": (7, 10, 11, 12, 4, 8, 6, 9, 6),
}
#: Table 5 (all four collections): τ take-three-teams and take-one-team rows
PAPER_TABLE5 = np.array(
    [
        [0.950, 0.917, 0.900, 0.967, 0.933, 0.933, 0.933, 0.933, 0.967],
        [0.951, 0.918, 0.929, 0.958, 0.944, 0.932, 0.920, 0.935, 0.947],
        [0.978, 0.956, 0.978, 0.934, 0.956, 1, 1, 0.956, 1],
        [0.932, 0.936, 0.898, 0.903, 0.903, 0.906, 0.907, 0.860, 0.926],
        [0.956, 0.911, 0.956, 0.867, 0.956, 0.822, 0.822, 0.956, 0.956],
        [0.876, 0.880, 0.925, 0.893, 0.894, 0.756, 0.782, 0.885, 0.849],
        [1, 0.956, 1, 0.911, 0.956, 1, 1, 1, 1],
        [0.960, 0.929, 0.991, 0.880, 0.920, 0.853, 0.867, 0.898, 0.907],
    ]
)
#: Table 8 (TREC03, TREC04, NTCIR-6J, NTCIR-6C): τ at pd = 50, 10, 1 (rows) per collection
PAPER_TABLE8 = {
    "TREC03": [
        [1, 0.950, 0.967, 1, 0.983, 0.967, 0.967, 0.983, 1],
        [0.933, 0.850, 0.900, 0.883, 0.917, 0.883, 0.867, 0.900, 0.950],
        [0.717, 0.700, 0.800, 0.800, 0.817, 0.667, 0.650, 0.750, 0.750],
    ],
    "TREC04": [
        [1, 1, 1, 1, 1, 0.978, 1, 0.978, 1],
        [0.978, 0.978, 0.890, 0.956, 0.956, 0.868, 0.912, 0.846, 1],
        [0.846, 0.780, 0.846, 0.692, 0.846, 0.736, 0.802, 0.626, 0.780],
    ],
    "NTCIR-6J": [
        [1, 1, 0.956, 1, 0.956, 0.911, 1, 0.956, 1],
        [0.911, 0.911, 0.956, 1, 0.867, 0.867, 0.911, 0.956, 0.867],
        [0.644, 0.689, 0.733, 0.644, 0.689, 0.511, 0.600, 0.867, 0.689],
    ],
    "NTCIR-6C": [
        [1, 1, 1, 1, 1, 1, 1, 1, 1],
        [1, 0.911, 0.956, 0.911, 1, 0.956, 0.956, 1, 1],
        [0.911, 0.911, 0.956, 0.822, 0.911, 0.778, 0.867, 0.867, 0.822],
    ],
}

_G = "'generally' = in ≥ 2/3 of the comparisons (pbtools.papers.claims.GENERALLY)"

CLAIMS = declared(
    Claim(
        "F1a",
        "§5, Table 3, finding (1)",
        "according to condensed-list metrics (AP', Q', nDCG', RBP', bpref) the scores tend to go "
        "up with the use of each leave-one-team-out relevance data: they overestimate systems "
        "that did not contribute to the pool",
        "score change of each team's selected run under J − U_t, per team and condensed metric",
        f"holds if the change is > 0 in 'generally' the (team, condensed metric) cells; {_G}",
        f"up in {int((PAPER_TABLE3[:, :5] > 0).sum())}/50 cells (Table 3, NTCIR-6J)",
    ),
    Claim(
        "F1b",
        "§5, Table 3, finding (1)",
        "according to traditional metrics (AP, Q, nDCG, RBP) the scores tend to go down: they "
        "underestimate [new systems]",
        "the same change per team and traditional metric",
        f"holds if the change is < 0 in 'generally' the (team, traditional metric) cells; {_G}",
        f"down in {int((PAPER_TABLE3[:, 5:] < 0).sum())}/40 cells (Table 3, NTCIR-6J)",
    ),
    Claim(
        "F1c",
        "§5, finding (1)",
        "the percentage increase of the condensed-list metrics tends to be higher than the "
        "percentage decrease of the traditional metrics (the overestimation is larger than the "
        "underestimation)",
        "per team and metric pair (AP'/AP, Q'/Q, nDCG'/nDCG, RBP'/RBP): the condensed change vs "
        "minus the traditional change",
        f"holds if the condensed change exceeds minus the traditional one in 'generally' the "
        f"(team, pair) cells; {_G}",
        f"larger in {int((PAPER_TABLE3[:, :4] > -PAPER_TABLE3[:, 5:]).sum())}/40 cells (Table 3)",
    ),
    Claim(
        "F1d",
        "§5, Table 3",
        "according to condensed-list metrics the ranks tend to go up with leave-one-team-out "
        "relevance data, while according to traditional metrics they tend to go down",
        "rank of each team's run among the selected runs, full vs J − U_t, (team, metric) cells "
        "whose rank changes",
        f"holds if 'generally' the moved condensed cells move up and the moved traditional cells "
        f"move down; {_G}; n.a. if no rank moves in a group",
        "condensed 8 up / 0 down; traditional 0 up / 6 down (Table 3)",
    ),
    Claim(
        "F6a",
        "§6, Table 4",
        "if a single team t is used for forming the relevance data, the run score for t goes up "
        "for all metrics (except for RBP and RBP')",
        "score change of team t's run under D_t, per team (without '†') and metric but RBP, RBP'",
        "'for all' = every (team, metric) change is > 0",
        "all 56 changes > 0 (NTCIR-6J, 8 teams × 7 metrics)",
    ),
    Claim(
        "F6b",
        "§6",
        "as for RBP and RBP', replacing J with D_t does not substantially affect the run score "
        "for t (they totally disregard recall)",
        "|change| of RBP and RBP' vs the smallest |change| of the seven other metrics, per team",
        "'not substantially' is read against the other metrics, as the paper contrasts them: "
        "holds if for every team (without '†') both RBP changes are smaller in size than every "
        "other metric's change",
        "max |change| 0.17 % vs ≥ 2.65 % for the others (Table 4)",
    ),
    Claim(
        "F6c",
        "§6, Table 4",
        "while traditional metrics overestimate the rank of a run from t, condensed-list metrics "
        "underestimate it",
        "rank of team t's run, full vs D_t, (team, metric) cells whose rank changes",
        f"holds if 'generally' the moved traditional cells move up and the moved condensed cells "
        f"move down; {_G}; n.a. if no rank moves in a group",
        "condensed 18 down / 1 up; traditional 27 up / 0 down (Table 4)",
    ),
    Claim(
        "T5",
        "§6, Table 5",
        "the correlation values [take-one-team averaged over teams, take-three-teams, vs the "
        "full-data ranking] are generally very high",
        "Kendall's τ of the selected runs' ranking, per condition and metric (18 values)",
        f"'very high' = τ ≥ {VERY_HIGH_TAU} (rankings treated as equivalent, Voorhees 2000); "
        f"holds if 'generally' the τ are; {_G}",
        "τ .756-1; 54 of 72 values ≥ .9 (Table 5)",
    ),
    Claim(
        "M1",
        "§6, Tables 6-7",
        "take-one-team relevance data generally yield more misses and false alarms than "
        "take-three-teams relevance data",
        "misses + false alarms per metric, take-one-team (mean over teams) vs Sakai's three "
        "teams with the fewest unique contributions",
        f"holds if take-one-team has more for 'generally' the 9 metrics; {_G}",
        "9 of 9 metrics (TREC03)",
    ),
    Claim(
        "F2a",
        "§6, Tables 6-7, finding (2)",
        "AP, Q and nDCG are generally more discriminative than AP', Q' and nDCG', respectively, "
        "even with take-one-team relevance data",
        "discriminative power (share of run pairs significant, paired bootstrap) per metric, "
        "take-one-team (mean over teams)",
        f"holds if the traditional metric is more discriminative in 'generally' the 3 pairs; {_G}",
        "TREC03: AP 66.4 vs AP' 59.6, Q 67.6 vs Q' 59.0, nDCG 61.6 vs nDCG' 54.4 %",
    ),
    Claim(
        "F2b",
        "§6, Tables 6-7, finding (2)",
        "AP, Q and nDCG are generally more discriminative than AP', Q' and nDCG', respectively, "
        "even with take-three-teams relevance data",
        "discriminative power per metric, Sakai's take-three-teams",
        f"holds if the traditional metric is more discriminative in 'generally' the 3 pairs; {_G}",
        "TREC03: AP 67.5 vs AP' 61.7, Q 68.3 vs Q' 62.5, nDCG 63.3 vs nDCG' 55.0 %",
    ),
    Claim(
        "F3",
        "§7, Tables 9-10, finding (3)",
        "in the presence of pool depth bias, AP', Q' and nDCG' are not necessarily superior to "
        "AP, Q and nDCG in terms of discriminative power",
        "discriminative power of each condensed metric vs its traditional twin, at every shallow "
        "pool depth",
        "'not necessarily superior' = not 'generally' superior: holds if the condensed metric is "
        "more discriminative in fewer than 2/3 of the (depth, pair) comparisons; n.a. without a "
        "shallow depth",
        "pd = 10: AP' 60.8 vs AP 63.3, Q' 58.3 vs Q 68.3, nDCG' 58.3 vs nDCG 59.2 %",
    ),
    Claim(
        "F4a",
        "§6, finding (4)",
        "even with take-one-team relevance data, AP' and Q' are generally more discriminative "
        "than bpref, RBP and RBP'",
        "discriminative power, take-one-team (mean): AP', Q' vs bpref, RBP, RBP' (6 comparisons)",
        f"holds if 'generally' the 6 comparisons favour AP'/Q'; {_G}",
        "TREC03: AP' 59.6, Q' 59.0 vs bpref 51.7, RBP' 43.1, RBP 52.6 %",
    ),
    Claim(
        "F4b",
        "§6, finding (4)",
        "even with take-three-teams relevance data, AP' and Q' are generally more discriminative "
        "than bpref, RBP and RBP'",
        "the same 6 comparisons, Sakai's take-three-teams",
        f"holds if 'generally' the 6 comparisons favour AP'/Q'; {_G}",
        "TREC03: AP' 61.7, Q' 62.5 vs bpref 55.8, RBP' 42.5, RBP 49.2 %",
    ),
    Claim(
        "F4c",
        "§7, finding (4)",
        "in the presence of pool depth bias, AP' and Q' are generally more discriminative than "
        "bpref, RBP and RBP'",
        "the same 6 comparisons at every shallow depth",
        f"holds if 'generally' the (depth, comparison) pairs favour AP'/Q'; {_G}; n.a. without a "
        "shallow depth",
        "TREC03 pd = 10: AP' 60.8, Q' 58.3 vs bpref 54.2, RBP' 36.7, RBP 46.7 %",
    ),
    Claim(
        "D1",
        "§7, Table 8",
        "reducing the pool depth does hurt the system ranking",
        "Kendall's τ vs the full-data ranking per metric and shallow depth",
        f"holds if τ is lower at the shallower depth in 'generally' the (metric, step between "
        f"consecutive shallow depths) comparisons; {_G}; n.a. with fewer than 2 shallow depths",
        "TREC03 AP' τ 1 / .933 / .717 at pd = 50 / 10 / 1",
    ),
    Claim(
        "D2",
        "§7, Tables 9-10",
        "more generally, the discriminative power of metrics goes down as the pool depth is "
        "reduced, and the number of misses and false alarms increases",
        "per metric and step from the full data through the shallow depths (deepest first): "
        "discriminative power and misses + false alarms (0 for the full data)",
        f"holds if power falls and misses + false alarms rise in 'generally' the (metric, step) "
        f"comparisons, each; {_G}; n.a. without a shallow depth",
        "TREC03 Q 66.7 % (full) → 41.7 % (pd = 1)",
    ),
)
