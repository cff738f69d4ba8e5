"""Webber & Park (2009): the paper's claims, declared from the paper before any data, and
their verdicts on the frames of :func:`pbtools.papers.webber2009.run_track`.

Every claim is a :class:`~pbtools.papers.claims.Claim` in :data:`CLAIMS` (its quote, section,
the quantity computed and the criterion with the reading of the paper's wording).
:func:`claims_table` computes the quantities on one track and applies the criteria; it reads
only the ``samples``, ``errors`` and ``bias`` frames, so the verdicts can be tested on frames
built by hand (``tests/papers/test_webber2009.py``).

Two readings are worth stating here. "Roughly halving when the pool width is doubled" (F1c)
says |bias| ∝ w^−b with b = 1; "roughly" is read as: the exponent b fitted by least squares
on log |bias| against log w rounds to 1, the nearest whole exponent, rather than to 0 (no
decline) or 2 (quartering per doubling), i.e. 0.5 ≤ b < 1.5, a per-doubling factor in
[2^−1.5, 2^−0.5) = [0.354, 0.707). "As likely to over- as to underestimate" (T1b) is the
hypothesis that the share of overestimates is 1/2, checked by a two-sided sign test.

The declarations (:data:`CLAIMS`, the constants and the paper's own numbers) are in
:mod:`pbtools.papers.webber2009_catalogue`, re-exported here; this module computes the verdicts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.papers.claims import Claims, num, share
from pbtools.papers.webber2009_catalogue import (  # noqa: F401  (re-exported: the catalogue)
    CLAIMS,
    HALVING,
    NO_MANUAL,
    PAPER,
    PAPER_COMMON,
    PAPER_WIDTH,
    SIGN_ALPHA,
)


def _check(c: Claims, cid: str, ours, holds, note: str = "") -> None:
    c.check(CLAIMS[cid], ours, holds, note)


def _ratio(a: float, b: float) -> float:
    """a / b; NaN when b is 0 (a comparison with NaN is False)."""
    return float(a) / float(b) if b else float("nan")


def per_doubling(widths, bias) -> float:
    """The per-doubling factor 2^slope of the least-squares line of log2|bias| on log2 w.

    >>> round(per_doubling([2, 4, 8], [0.4, 0.2, 0.1]), 6)
    0.5
    """
    slope = np.polyfit(np.log2(np.asarray(widths, float)), np.log2(np.abs(bias)), 1)[0]
    return float(2.0**slope)


def claims_table(result: dict, track: str, n_topics: int, manual=()) -> pd.DataFrame:
    """Webber & Park's claims (:data:`CLAIMS`) checked on one track; see
    :mod:`pbtools.papers.claims` for the columns. ``manual``: the manual runs given (their
    part of ``result`` has ``part == "manual"``)."""
    from scipy.stats import binomtest

    c = Claims(PAPER, track)
    b = result["bias"].set_index(["lists", "width"]).sort_index()
    errors = result["errors"]
    if "part" not in errors.columns:
        errors = errors.assign(part="all")
    e = errors.set_index(["part", "table", "lists", "width", "common_topics", "estimator"])
    e = e.sort_index()["mae"].to_dict()
    rmse = errors.set_index(["part", "table", "lists", "width", "common_topics", "estimator"])
    rmse = rmse.sort_index()["rmse"].to_dict()
    s = result["samples"]
    s = s[s["part"] == "all"] if "part" in s.columns else s
    widths = sorted(result["bias"]["width"].unique())
    irr = b.loc["irrelevant"]["mean"].reindex(widths)
    cond = b.loc["condensed"]["mean"].reindex(widths)

    def fmt(v):
        return ", ".join(f"w={w} {num(x, 3, signed=True)}" for w, x in v.items())

    _check(c, "F1a", "mean bias " + fmt(irr), bool((irr < 0).all()))
    _check(c, "F1b", "mean bias " + fmt(cond), bool((cond > 0).all()))
    # F1c
    if len(widths) < 2:
        _check(c, "F1c", "", None, "needs ≥ 2 pool widths")
    elif (irr == 0).any():
        _check(c, "F1c", "mean bias " + fmt(irr), None, "zero bias at some width: no factor")
    else:
        falls = bool((np.diff(np.abs(irr.to_numpy())) < 0).all())
        f = per_doubling(widths, irr.to_numpy())
        in_band = HALVING[0] <= f < HALVING[1]
        _check(
            c,
            "F1c",
            f"fitted ×{f:.2f} per doubling over widths {', '.join(map(str, widths))}; |bias| "
            + ("falls at every wider width" if falls else "does not fall at every wider width"),
            falls and in_band,
        )
    small, large = widths[0], widths[-1]
    _check(
        c,
        "F1d",
        f"|bias| at w={small}: condensed {num(abs(cond[small]))} vs irrelevant "
        f"{num(abs(irr[small]))}; at w={large}: {num(abs(cond[large]))} vs {num(abs(irr[large]))}",
        bool(abs(cond[small]) < abs(irr[small]) and abs(irr[large]) < abs(cond[large])),
    )
    wide = b.loc[("irrelevant", large)]
    mid, mean, q3 = -wide["median"], -wide["mean"], -wide["q1"]  # in units of underestimate
    _check(
        c,
        "F1e",
        f"w={large}: underestimate median {num(mid)}, mean {num(mean)}, Q3 {num(q3)}",
        bool(abs(q3 - mean) < abs(mean - mid)),
    )
    # Table 1 (left): inference from systems
    t1 = {
        w: (
            e[("all", 1, "irrelevant", w, 0, "unadjusted")],
            e[("all", 1, "irrelevant", w, 0, "adjusted_runs")],
        )
        for w in widths
    }
    better = [w for w, (un, ad) in t1.items() if ad < un]
    gain = {w: 1 - _ratio(ad, un) for w, (un, ad) in t1.items()}
    _check(
        c,
        "T1a",
        "MAE unadjusted → adjusted: "
        + ", ".join(f"w={w} {num(un)}→{num(ad)}" for w, (un, ad) in t1.items())
        + f"; lower at {share(len(better), len(widths))} widths; reduction "
        f"{100 * gain[small]:.0f} % at w={small}, {100 * gain[large]:.0f} % at w={large}",
        len(better) == len(widths) and bool(gain[small] > gain[large]),
    )
    ok = s["webber_runs"].notna() & (s["webber_runs"] != s["true"])
    over = int((s.loc[ok, "webber_runs"] > s.loc[ok, "true"]).sum())
    n_ok = int(ok.sum())
    if n_ok == 0:
        _check(c, "T1b", "", None, "no adjusted score differs from the true score")
    else:
        p = binomtest(over, n_ok, 0.5).pvalue
        _check(
            c,
            "T1b",
            f"{share(over, n_ok)} samples overestimate ({100 * over / n_ok:.0f} %), sign test "
            f"p = {p:.3g}",
            bool(p >= SIGN_ALPHA),
        )
    under = int((s["unadjusted"] <= s["true"] + 1e-12).sum())
    _check(c, "T1c", f"{share(under, len(s))} samples", under == len(s))
    # Table 1 (right): manual runs
    mw = sorted(w for p_, t, _, w, _, est in e if p_ == "manual" and t == 1 and est == "unadjusted")
    if not manual:
        _check(c, "T1m", "", None, NO_MANUAL)
    elif not mw:
        _check(c, "T1m", "", None, "no manual part was run (no automatic pooled run to pool)")
    else:
        m1 = {
            w: (
                e[("manual", 1, "irrelevant", w, 0, "unadjusted")],
                e[("manual", 1, "irrelevant", w, 0, "adjusted_runs")],
            )
            for w in mw
        }
        helps = all(ad < un for un, ad in m1.values())
        strong = m1[mw[-1]][1] > t1[small][1]
        _check(
            c,
            "T1m",
            f"manual runs {', '.join(manual)}: MAE unadjusted → adjusted "
            + ", ".join(f"w={w} {num(un)}→{num(ad)}" for w, (un, ad) in m1.items())
            + f"; random runs adjusted at w={small}: {num(t1[small][1])}",
            helps and strong,
        )
    # Table 2: inference from common topics, unjudged = irrelevant
    ns = sorted(n for n in errors["common_topics"].unique() if n > 0)

    def t23(table, lists, w, n, est, part="all", what=e):
        return what[(part, table, lists, w, n, est)]

    cells = [(w, n) for w in widths for n in ns]
    nmin = ns[0]
    adj_wins = [
        x
        for x in cells
        if t23(2, "irrelevant", *x, "adjusted") < t23(2, "irrelevant", *x, "unadjusted")
    ]
    _check(
        c,
        "T2a",
        f"lower in {share(len(adj_wins), len(cells))} cells; n={nmin}: "
        + ", ".join(
            f"w={w} {num(t23(2, 'irrelevant', w, nmin, 'unadjusted'))}→"
            f"{num(t23(2, 'irrelevant', w, nmin, 'adjusted'))}"
            for w in widths
        ),
        len(adj_wins) == len(cells),
    )
    mix_wins = [
        x for x in cells if t23(2, "irrelevant", *x, "adjusted") < t23(2, "irrelevant", *x, "mixed")
    ]
    _check(
        c,
        "T2b",
        f"adjusted below mixed in {share(len(mix_wins), len(cells))} cells",
        len(mix_wins) == len(cells),
    )
    if len(ns) < 2:
        for cid in ("T2c", "T2d"):
            _check(c, cid, "", None, "needs ≥ 2 numbers of common topics")
    else:
        n0, n1, N = ns[0], ns[-1], n_topics
        pred = np.sqrt((N - n1) / (n1 * N)) / np.sqrt((N - n0) / (n0 * N))
        alt = (N - n1) / (N - n0)
        obs = {
            w: _ratio(
                t23(2, "irrelevant", w, n1, "adjusted", what=rmse),
                t23(2, "irrelevant", w, n0, "adjusted", what=rmse),
            )
            for w in widths
        }
        fits = [
            w
            for w, o in obs.items()
            if o > 0 and abs(np.log(o / pred)) < min(abs(np.log(o / alt)), abs(np.log(o)))
        ]
        _check(
            c,
            "T2c",
            f"RMSE ratio n={n0}→{n1} (N={N}): "
            + ", ".join(f"w={w} {o:.2f}" for w, o in obs.items())
            + f"; predicted {pred:.2f}, mixed law {alt:.2f}; nearer the prediction at "
            f"{share(len(fits), len(widths))} widths",
            len(fits) == len(widths),
        )
        ratio = {
            est: [
                _ratio(t23(2, "irrelevant", w, n1, est), t23(2, "irrelevant", w, n0, est))
                for w in widths
            ]
            for est in ("mixed", "adjusted")
        }
        slower = [m > a for m, a in zip(ratio["mixed"], ratio["adjusted"], strict=True)]
        _check(
            c,
            "T2d",
            f"MAE ratio n={n0}→{n1}, mixed vs adjusted: "
            + ", ".join(
                f"w={w} {m:.2f} vs {a:.2f}"
                for w, m, a in zip(widths, ratio["mixed"], ratio["adjusted"], strict=True)
            ),
            all(slower),
        )
    un = [t23(2, "irrelevant", w, nmin, "unadjusted") for w in widths]
    rel = {
        n: [
            1
            - _ratio(
                t23(2, "irrelevant", w, n, "adjusted"), t23(2, "irrelevant", w, n, "unadjusted")
            )
            for w in widths
        ]
        for n in ns
    }
    falls = bool(np.all(np.diff(un) < 0))
    less = [n for n, g in rel.items() if g[-1] < g[0]]
    _check(
        c,
        "T2e",
        "unadjusted MAE "
        + ", ".join(f"w={w} {num(u)}" for w, u in zip(widths, un, strict=True))
        + "; reduction at w="
        + f"{small} vs w={large}: "
        + ", ".join(f"n={n} {100 * g[0]:.0f} % vs {100 * g[-1]:.0f} %" for n, g in rel.items()),
        len(widths) > 1 and falls and len(less) == len(ns),
    )
    # Table 3: condensed lists
    if PAPER_WIDTH in widths and PAPER_COMMON in ns:
        u2 = t23(3, "condensed", PAPER_WIDTH, PAPER_COMMON, "unadjusted")
        a2 = t23(3, "condensed", PAPER_WIDTH, PAPER_COMMON, "adjusted")
        _check(c, "T3a", f"w=2, n=10: unadjusted {num(u2)}, adjusted {num(a2)}", bool(u2 < a2))
    else:
        _check(c, "T3a", "", None, "needs pool width 2 and 10 common topics (--widths, --common)")
    n10 = PAPER_COMMON if PAPER_COMMON in ns else ns[len(ns) // 2]
    uL = t23(3, "condensed", large, n10, "unadjusted")
    aL = t23(3, "condensed", large, n10, "adjusted")
    _check(c, "T3b", f"w={large}, n={n10}: unadjusted {num(uL)}, adjusted {num(aL)}", bool(aL < uL))
    worse = int(
        ((s["var_true"] < s["mse_adjusted"]) | (s["var_true"] < s["mse_adjusted_condensed"])).sum()
    )
    _check(c, "E1", f"{worse} of {len(s)} system sets", worse == 0)
    # Table 4: manual runs, common topics
    if not manual:
        _check(c, "T4", "", None, NO_MANUAL)
    elif not mw or PAPER_WIDTH not in mw or PAPER_COMMON not in ns:
        _check(c, "T4", "", None, "needs the manual part with pool width 2 and 10 common topics")
    else:
        a = t23(2, "irrelevant", PAPER_WIDTH, PAPER_COMMON, "adjusted", part="manual")
        u = t23(2, "irrelevant", mw[-1], PAPER_COMMON, "unadjusted", part="manual")
        _check(
            c,
            "T4",
            f"manual runs: adjusted (w=2, n=10) {num(a)} vs unadjusted (w={mw[-1]}) {num(u)}",
            bool(a < 0.5 * u),
        )
    return c.frame()
