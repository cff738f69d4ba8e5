"""Sakai (2008): the paper's claims, declared from the paper before any data, and their
verdicts on the frames of :func:`pbtools.papers.sakai2008.run_track`.

Every claim is a :class:`~pbtools.papers.claims.Claim` in :data:`CLAIMS`. :func:`claims_table`
reads only the ``leave_one_team_out``, ``take_one_team``, ``summary`` and ``power`` frames, so
the verdicts can be tested on frames built by hand (``tests/test_sakai2008.py``); the criteria
also hold on the paper's own Tables 3, 5, 6 and 8 (:data:`PAPER_TABLE3`, …), which the tests
check.

Readings of the paper's wording, fixed here for every claim: "tend to", "generally" and "more
generally" are :func:`~pbtools.papers.claims.generally` (≥ 2/3 of the comparisons) over the
comparisons the statement covers (team × metric cells, metric pairs, depth steps); "for all"
is every comparison; "not necessarily superior" is the negation of "generally superior";
"very high" rank correlation is Kendall's τ ≥ 0.9, the usual threshold above which two
system rankings are treated as equivalent (Voorhees 2000). A rank "moving" is counted only
where it changes (most cells of Sakai's Tables 3-4 do not move).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.papers.claims import Claim, Claims, declared, generally, num, pct, share

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


def _check(c: Claims, cid: str, ours, holds, note: str = "") -> None:
    c.check(CLAIMS[cid], ours, holds, note)


def _row(frame: pd.Series, key: tuple) -> pd.Series:
    """One condition's row (per metric) of a summary column; NaN where the collection has no
    such condition (a team whose runs are all excluded, fewer than three teams)."""
    if key in frame.index:
        return frame.loc[key].reindex(list(LABELS))
    return pd.Series(np.nan, index=list(LABELS))


def _moves(ch: pd.DataFrame, labels) -> tuple[int, int]:
    """(up, down): rank moves of the (team, metric) cells of ``labels`` whose rank changed."""
    g = ch[ch["label"].isin(labels)]
    return int((g["rank_reduced"] < g["rank_full"]).sum()), int(
        (g["rank_reduced"] > g["rank_full"]).sum()
    )


def _wins(power: pd.Series, better, worse) -> tuple[int, int, list[str]]:
    """How many of the comparisons ``better`` > ``worse`` hold (NaN comparisons left out)."""
    k, n, fails = 0, 0, []
    for b in better:
        for w in worse:
            if np.isnan(power[b]) or np.isnan(power[w]):
                continue
            n += 1
            if power[b] > power[w]:
                k += 1
            else:
                fails.append(f"{b} {num(power[b])} ≤ {w} {num(power[w])}")
    return k, n, fails


def _cells(ch: pd.DataFrame) -> pd.DataFrame:
    """team × metric change table (%), NaN changes (a zero full score) dropped per cell."""
    return ch.pivot_table(index="team", columns="label", values="change_pct", aggfunc="first")


def claims_table(result: dict, track: str) -> pd.DataFrame:
    """Sakai's claims (:data:`CLAIMS`) checked on one track; see :mod:`pbtools.papers.claims`
    for the columns."""
    c = Claims(PAPER, track)
    loto = result["leave_one_team_out"]
    take1 = result["take_one_team"]
    take1 = take1[take1["valid"]]
    summ = result["summary"]
    idx = ["kind", "condition", "label"]
    power = summ.set_index(idx)["share_significant"].sort_index()
    tau = summ.set_index(idx)["tau"].sort_index()
    err = summ.assign(err=summ["misses"] + summ["false_alarms"]).set_index(idx)["err"]
    err = err.sort_index()

    # §5: leave-one-team-out
    cells = _cells(loto)
    cond = cells.reindex(columns=list(CONDENSED)).to_numpy().ravel()
    cond = cond[~np.isnan(cond)]
    trad = cells.reindex(columns=list(TRADITIONAL)).to_numpy().ravel()
    trad = trad[~np.isnan(trad)]
    up, down = int((cond > 0).sum()), int((trad < 0).sum())
    none = "no score change to compare (no team run with a non-zero full score)"
    _check(
        c,
        "F1a",
        f"up in {share(up, len(cond))} cells",
        generally(up, len(cond)),
        "" if len(cond) else none,
    )
    _check(
        c,
        "F1b",
        f"down in {share(down, len(trad))} cells",
        generally(down, len(trad)),
        "" if len(trad) else none,
    )
    larger = n_pairs = 0
    for a, b in PAIRS:
        if a in cells and b in cells:
            ok = cells[a].notna() & cells[b].notna()
            larger += int((cells.loc[ok, a] > -cells.loc[ok, b]).sum())
            n_pairs += int(ok.sum())
    med = loto.groupby("label")["change_pct"].median().reindex(list(LABELS))
    _check(
        c,
        "F1c",
        f"larger in {share(larger, n_pairs)} (team, pair) cells; median change "
        + ", ".join(f"{a} {pct(med[a], 2)} vs {b} {pct(med[b], 2)}" for a, b in PAIRS),
        generally(larger, n_pairs),
        "" if n_pairs else none,
    )
    cu, cd = _moves(loto, CONDENSED)
    tu, td = _moves(loto, TRADITIONAL)
    g1, g2 = generally(cu, cu + cd), generally(td, tu + td)
    _check(
        c,
        "F1d",
        f"condensed {cu} up / {cd} down; traditional {tu} up / {td} down",
        None if g1 is None or g2 is None else g1 and g2,
        "" if g1 is not None and g2 is not None else "no rank moved in a group of metrics",
    )
    # §6: take-one-team
    cells1 = _cells(take1)
    rises = [m for m in LABELS if m not in ("RBP'", "RBP")]
    r = cells1.reindex(columns=rises).to_numpy().ravel()
    r = r[~np.isnan(r)]
    n_teams = len(cells1)
    if len(r) == 0:
        _check(c, "F6a", "", None, "no team without '†' (every team lacks relevant documents)")
    else:
        _check(
            c,
            "F6a",
            f"{share(int((r > 0).sum()), len(r))} changes > 0 over {n_teams} teams",
            bool((r > 0).all()),
        )
    if n_teams == 0:
        _check(c, "F6b", "", None, "no team without '†' (every team lacks relevant documents)")
    else:
        rbp = cells1.reindex(columns=["RBP'", "RBP"]).abs().max(axis=1)
        other = cells1.reindex(columns=rises).abs().min(axis=1)
        small = int((rbp < other).sum())
        _check(
            c,
            "F6b",
            f"max |RBP change| {pct(rbp.max(), 2, signed=False)}, smallest other "
            f"{pct(other.min(), 2, signed=False)}; smaller for {share(small, n_teams)} teams",
            small == n_teams,
        )
    cu, cd = _moves(take1, CONDENSED)
    tu, td = _moves(take1, TRADITIONAL)
    g1, g2 = generally(cd, cu + cd), generally(tu, tu + td)
    _check(
        c,
        "F6c",
        f"condensed {cd} down / {cu} up; traditional {tu} up / {td} down",
        None if g1 is None or g2 is None else g1 and g2,
        "" if g1 is not None and g2 is not None else "no rank moved in a group of metrics",
    )
    # Table 5
    t1 = _row(tau, ("take_one_team", "mean"))
    t3 = _row(tau, ("take_three_teams", "smallest-unique"))
    taus = pd.concat([t1, t3]).dropna().to_numpy()
    high = int((taus >= VERY_HIGH_TAU).sum())
    _check(
        c,
        "T5",
        f"take-one-team τ {num(t1.min())}-{num(t1.max())}, take-three-teams "
        f"{num(t3.min())}-{num(t3.max())}; {share(high, len(taus))} ≥ {VERY_HIGH_TAU}",
        generally(high, len(taus)),
        "" if len(taus) else "no take-one-team or take-three-teams condition on this track",
    )
    # Tables 6-7
    e1 = _row(err, ("take_one_team", "mean"))
    e3 = _row(err, ("take_three_teams", "smallest-unique"))
    ok = e1.notna() & e3.notna()
    more = int((e1[ok] > e3[ok]).sum())
    _check(
        c,
        "M1",
        f"{share(more, int(ok.sum()))} metrics: "
        + ", ".join(f"{m} {e1[m]:.1f} vs {e3[m]:.0f}" for m in LABELS if ok[m]),
        generally(more, int(ok.sum())),
        "" if ok.any() else "no take-three-teams condition on this track (fewer than 3 teams)",
    )
    for cid, key in (
        ("F2a", ("take_one_team", "mean")),
        ("F2b", ("take_three_teams", "smallest-unique")),
    ):
        pw = _row(power, key)
        wins = [(b, a) for a, b in PAIRS[:3] if pw[b] > pw[a]]
        n = sum(1 for a, b in PAIRS[:3] if not (np.isnan(pw[a]) or np.isnan(pw[b])))
        _check(
            c,
            cid,
            ", ".join(f"{b} {100 * pw[b]:.1f} vs {a} {100 * pw[a]:.1f} %" for a, b in PAIRS[:3]),
            generally(len(wins), n),
            "" if n else "no such condition on this track (fewer than three teams)",
        )
    # §7: shallow pools
    shallow = sorted(
        {k[1] for k in power.index if k[0] == "shallow"}, key=lambda s: -int(s.split("=")[1])
    )
    if not shallow:
        for cid in ("F3", "F4c", "D1", "D2"):
            _check(c, cid, "", None, "no shallow pool depth below this track's pool depth")
    else:
        higher = n3 = 0
        for d in shallow:
            pw = _row(power, ("shallow", d))
            for a, b in PAIRS[:3]:
                n3 += 1
                higher += int(pw[a] > pw[b])
        _check(
            c,
            "F3",
            f"condensed more discriminative in {share(higher, n3)} (depth, pair) comparisons",
            not generally(higher, n3),
        )
    for cid, conds in (
        ("F4a", [("take_one_team", "mean")]),
        ("F4b", [("take_three_teams", "smallest-unique")]),
        ("F4c", [("shallow", d) for d in shallow]),
    ):
        if not conds:
            continue
        k = n = 0
        fails = []
        for key in conds:
            w, m, f = _wins(_row(power, key), ("AP'", "Q'"), ("bpref", "RBP'", "RBP"))
            k, n = k + w, n + m
            fails += [(key[1] + " " if key[0] == "shallow" else "") + x for x in f]
        _check(
            c,
            cid,
            f"{share(k, n)} comparisons" + (f"; not: {'; '.join(fails)}" if fails else ""),
            generally(k, n),
            "" if n else "no such condition on this track (fewer than three teams)",
        )
    if len(shallow) < 2:
        if shallow:
            _check(c, "D1", "", None, "needs ≥ 2 shallow depths below the pool depth")
    else:
        tt = np.array([_row(tau, ("shallow", d)).to_numpy() for d in shallow])
        steps = tt[1:] < tt[:-1]
        valid = ~(np.isnan(tt[1:]) | np.isnan(tt[:-1]))
        k, n = int(steps[valid].sum()), int(valid.sum())
        _check(
            c,
            "D1",
            f"τ lower at the shallower depth in {share(k, n)} (metric, step) comparisons "
            f"({' → '.join(shallow)})",
            generally(k, n),
        )
    if shallow:
        levels = [("full", "full")] + [("shallow", d) for d in shallow]
        pw = np.array([_row(power, key).to_numpy() for key in levels])
        er = np.array([_row(err, key).to_numpy() for key in levels])
        er[0] = np.where(np.isnan(er[0]), 0.0, er[0])  # the full data: no misses by definition
        valid = ~(np.isnan(pw[1:]) | np.isnan(pw[:-1]))
        down = int((pw[1:] < pw[:-1])[valid].sum())
        up = int((er[1:] > er[:-1])[valid].sum())
        n = int(valid.sum())
        g1, g2 = generally(down, n), generally(up, n)
        _check(
            c,
            "D2",
            f"power lower in {share(down, n)}, misses + false alarms higher in {share(up, n)} "
            f"(metric, step) comparisons (full → {' → '.join(shallow)})",
            None if g1 is None else g1 and g2,
            "" if n else "no discriminative power at the shallow depths",
        )
    return c.frame()
