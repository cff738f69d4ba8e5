"""Sakai (2008): the paper's claims, declared from the paper before any data, and their
verdicts on the frames of :func:`pbtools.papers.sakai2008.run_track`.

Every claim is a :class:`~pbtools.papers.claims.Claim` in :data:`CLAIMS`. :func:`claims_table`
reads only the ``leave_one_team_out``, ``take_one_team``, ``summary`` and ``power`` frames, so
the verdicts can be tested on frames built by hand (``tests/papers/test_sakai2008.py``); the
criteria also hold on the paper's own Tables 3, 5, 6 and 8 (:data:`PAPER_TABLE3`, …), which the
tests check.

Readings of the paper's wording, fixed here for every claim: "tend to", "generally" and "more
generally" are :func:`~pbtools.papers.claims.generally` (≥ 2/3 of the comparisons) over the
comparisons the statement covers (team × metric cells, metric pairs, depth steps); "for all"
is every comparison; "not necessarily superior" is the negation of "generally superior";
"very high" rank correlation is Kendall's τ ≥ 0.9, the usual threshold above which two
system rankings are treated as equivalent (Voorhees 2000). A rank "moving" is counted only
where it changes (most cells of Sakai's Tables 3-4 do not move).

The declarations (:data:`CLAIMS`, the constants and the paper's own numbers) are in
:mod:`pbtools.papers.sakai2008_catalogue`, re-exported here; this module computes the verdicts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.papers.claims import Claims, generally, num, pct, share
from pbtools.papers.sakai2008_catalogue import (  # noqa: F401  (re-exported: the catalogue)
    CLAIMS,
    CONDENSED,
    LABELS,
    PAIRS,
    PAPER,
    PAPER_ERRORS,
    PAPER_POWER,
    PAPER_TABLE3,
    PAPER_TABLE5,
    PAPER_TABLE8,
    TRADITIONAL,
    VERY_HIGH_TAU,
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
