"""Buckley, Dimmick, Soboroff & Voorhees (2006): the paper's claims (:data:`CLAIMS`), declared
from the paper before any data, and their verdicts on the frames of
:func:`pbtools.papers.buckley2006.run_track` (:func:`claims_table`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.papers.claims import Claim, Claims, declared, pct, share

TITLESTAT = "titlestat needs topic titles and document texts, which the TREC layout lacks"

CLAIMS = declared(
    Claim(
        "U1",
        "§1",
        "comparing evaluation results when runs are scored with and without the unique "
        "relevant documents of the current group resulted in an average difference in MAP "
        "scores of 3.2 % (AQUAINT 2005, 50 runs pooled to depth 55)",
        "mean |MAP change| of the pooled runs without their group's unique relevant documents",
        "a figure of another collection: compared, not tested",
        "3.2 %",
    ),
    Claim(
        "U2",
        "§1",
        "a maximum difference of 23.1 % (run sab05ror1); more than 20 % is large",
        "the largest |MAP change| of a pooled run",
        "a figure of another collection: compared, not tested",
        "23.1 %",
    ),
    Claim(
        "D0",
        "Abstract, §1",
        "the AQUAINT 2005 test collection exhibits bias caused by pools that were too shallow "
        "for the document set size",
        "titlestat_rel of the collection against a smaller document set with the same topics",
        "needs the document set size, topic titles and document texts",
        "AQUAINT .719 vs Disks 4&5 .588",
    ),
    Claim(
        "D1",
        "§1 (counting argument)",
        "the shallower the pool, the more a group's unique relevant documents are worth",
        "mean |MAP change| without the group's unique relevant documents at the pool depth "
        "and at shallower depths (pooling.shallow)",
        "holds if the mean change grows at every shallower depth",
        "argued, not measured",
        extension=True,
    ),
    Claim(
        "B1",
        "§2, use of different evaluation measures",
        "runs that have a bias different from the judgment set tend to have their MAP scores "
        "underestimated and their bpref scores overestimated",
        "mean change of MAP and bpref of the pooled runs when their group's whole unique "
        "contribution U_t becomes unjudged (J − U_t)",
        "'tend to' = on average: holds if the mean MAP change is negative and the mean bpref "
        "change positive",
        "stated (preliminary examination), no figure",
    ),
    Claim(
        "B1r",
        "§2 (the same claim, only the unique relevant documents removed, U_t^rel)",
        "MAP underestimated and bpref overestimated",
        "mean change of bpref without U_t^rel",
        "removing relevant documents alone cannot show bpref's over-estimate (J − U_t^rel "
        "keeps the non-relevant judgments bpref counts)",
    ),
    Claim(
        "T1",
        "§1",
        "titlestat_rel is 0.588 on Disks 4&5 and 0.719 on AQUAINT; 0.530 over the unique "
        "relevant documents of sab05ror1",
        "titlestat_rel",
        TITLESTAT,
        ".588 / .719 / .530",
    ),
    Claim(
        "T2",
        "§1",
        "AQUAINT's titlestat_rel is higher than Disks 4&5's on 48 of 50 topics (paired t-test "
        "p = 6.25e-10)",
        "titlestat_rel per topic",
        TITLESTAT,
        "48/50",
    ),
    Claim(
        "T3",
        "§2",
        "titlestat_rel of the TREC 2004 and 2005 terabyte collections is 0.889 and 0.898",
        "titlestat_rel",
        TITLESTAT,
        ".889 / .898",
    ),
)


def claims_table(result: dict, track: str, depth: int) -> pd.DataFrame:
    """The claims of :data:`CLAIMS` checked on one track (``summary``; see :mod:`claims`)."""
    c = Claims("Buckley et al. 2006", track)
    s = result["summary"].set_index(["depth", "removed", "measure"]).sort_index()
    ap = s.loc[(depth, "unique_rel", "AP")]
    c.check(
        CLAIMS["U1"],
        f"{pct(ap['mean_abs_change_pct'], signed=False)} (depth {depth}, {ap['n_runs']} runs)",
        None,
    )
    c.check(
        CLAIMS["U2"],
        f"{pct(ap['max_abs_change_pct'], signed=False)} ({ap['max_run']}, {ap['max_org']})",
        None,
    )
    c.check(CLAIMS["D0"], "", None)
    ds = sorted({d for d, _, m in s.index if m == "AP"}, reverse=True)
    if len(ds) > 1:
        seq = [s.loc[(d, "unique_rel", "AP"), "mean_abs_change_pct"] for d in ds]
        mx = [s.loc[(d, "unique_rel", "AP"), "max_abs_change_pct"] for d in ds]
        over = [d for d, m in zip(ds, mx, strict=True) if m > 20]
        c.check(
            CLAIMS["D1"],
            "mean MAP change "
            + ", ".join(
                f"{pct(v, signed=False)} at depth {d}" for d, v in zip(ds, seq, strict=True)
            ),
            bool(np.all(np.diff(seq) > 0)),
            "holds if the mean change grows at every shallower depth; the largest change passes "
            "the paper's 20 % at depth " + (", ".join(map(str, over)) if over else "none of them"),
        )
    else:
        c.check(CLAIMS["D1"], "", None, "one pool depth only (give --depths with shallower ones)")
    keys = [(depth, "unique", "AP"), (depth, "unique", "Bpref"), (depth, "unique_rel", "Bpref")]
    if all(k in s.index for k in keys):
        whole_ap, whole_bp, rel_bp = (s.loc[k] for k in keys)
        c.check(
            CLAIMS["B1"],
            f"removing the group's whole unique contribution U_t: MAP "
            f"{pct(whole_ap['mean_change_pct'])}, bpref {pct(whole_bp['mean_change_pct'])} "
            f"(bpref up for {share(whole_bp['n_up'], whole_bp['n_runs'])} runs)",
            bool(whole_ap["mean_change_pct"] < 0 < whole_bp["mean_change_pct"]),
        )
        c.check(
            CLAIMS["B1r"],
            f"bpref {pct(rel_bp['mean_change_pct'])} (down for "
            f"{share(rel_bp['n_down'], rel_bp['n_runs'])} runs)",
            None,
        )
    else:
        why = (
            "bpref not among the measures (--measures AP Bpref)"
            if not any(m == "Bpref" for _, _, m in s.index)
            else "no pooled run has a score to change at the pool depth"
        )
        c.check(CLAIMS["B1"], "", None, why)
        c.check(CLAIMS["B1r"], "", None, why)
    for cid in ("T1", "T2", "T3"):
        c.check(CLAIMS[cid], "", None)
    return c.frame()
