"""Webber & Park (2009): the paper's claims, declared from the paper before any data, and
their verdicts on the frames of :func:`pbtools.papers.webber2009.run_track`.

Every claim is a :class:`~pbtools.papers.claims.Claim` in :data:`CLAIMS` (its quote, section,
the quantity computed and the criterion with the reading of the paper's wording).
:func:`claims_table` computes the quantities on one track and applies the criteria; it reads
only the ``samples``, ``errors`` and ``bias`` frames, so the verdicts can be tested on frames
built by hand (``tests/test_webber2009.py``).

Two readings are worth stating here. "Roughly halving when the pool width is doubled" (F1c)
says |bias| ∝ w^−b with b = 1; "roughly" is read as: the exponent b fitted by least squares
on log |bias| against log w rounds to 1, the nearest whole exponent, rather than to 0 (no
decline) or 2 (quartering per doubling), i.e. 0.5 ≤ b < 1.5, a per-doubling factor in
[2^−1.5, 2^−0.5) = [0.354, 0.707). "As likely to over- as to underestimate" (T1b) is the
hypothesis that the share of overestimates is 1/2, checked by a two-sided sign test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.papers.claims import Claim, Claims, declared, num, share

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
