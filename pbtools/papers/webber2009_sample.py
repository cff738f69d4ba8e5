"""Webber & Park (2009): one system sample of their Algorithm 3 (a grid task of
:func:`pbtools.papers.webber2009.run_track`) and Algorithm 2 over many common-topic sets at once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools import corrections, measures, pooling


def topic_masks(rng: np.random.Generator, n_topics: int, n: int, samples: int) -> np.ndarray:
    """``samples`` × ``n_topics`` boolean masks, each selecting ``n`` distinct topics."""
    pick = np.argsort(rng.random((samples, n_topics)), axis=1)[:, :n]
    mask = np.zeros((samples, n_topics), dtype=bool)
    np.put_along_axis(mask, pick, True, axis=1)
    return mask


def common_topic_estimates(t: np.ndarray, x: np.ndarray, masks: np.ndarray) -> dict:
    """Webber & Park Algorithm 2 over many common-topic sets at once.

    ``t``, ``x``: true and unpooled per-topic scores (aligned); ``masks``: samples × topics,
    True = a common (fully judged) topic. Returns per sample ``adjusted`` = mean(x) + mean_C(t −
    x), ``mixed`` = mean of t on C and x elsewhere, ``unadjusted`` = mean(x).
    """
    n = masks.sum(axis=1)
    m = masks.astype(np.float64)
    a = m @ (t - x) / n
    return {
        "unadjusted": np.full(len(masks), x.mean()),
        "adjusted": x.mean() + a,
        "mixed": (m @ t + (1.0 - m) @ x) / len(t),
    }


def sample_measures(pool_depth: int, rbp_p: float) -> tuple[str, str, str]:
    """The measures a sample scores its run r with: RBP(p)@depth with unjudged documents
    irrelevant, the same on condensed lists, and the share judged of its top ``pool_depth``."""
    return (
        measures.measure_names([f"RBP(p={rbp_p})@{pool_depth}"])[0],
        measures.measure_names([f"RBP(p={rbp_p},judged_only=True)@{pool_depth}"])[0],
        f"Judged@{pool_depth}",
    )


def _by_topic(qids: np.ndarray, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (one per topic code of ``codes``) laid out on ``qids``, NaN where absent."""
    out = np.full(len(qids), np.nan)
    out[np.searchsorted(qids, codes)] = values
    return out


def sample_task(
    width: int,
    repeat: int,
    seed: int,
    *,
    runs,
    top,
    true,
    qrels,
    pooled,
    pool_depth,
    rbp_p,
    common,
    topic_samples,
    manual=(),
) -> dict:
    """One (width, repeat) system sample of Algorithm 3; see the module docstring.

    ``runs``: the pooled runs (whole rankings: a condensed list reaches below the pool depth);
    ``top``: their top ``pool_depth`` (all that pooling and the Table 1 estimate need);
    ``true``: their per-topic scores on the full qrels (``name``, ``qid``, ``value``; the first
    measure of :func:`sample_measures`), computed once for every sample.
    ``manual``: empty, or the manual runs: then r is drawn from them and S from the pooled
    runs that are not manual (Webber & Park's Table 1 right and Table 4).
    Returns ``sample`` (one row of ``samples.parquet``) and ``errors`` (``width``, ``repeat``,
    ``sample`` (j), ``table``, ``lists``, ``common_topics``, ``estimator``, ``true``,
    ``estimate``): one row per topic sample and estimator.
    """
    rng = np.random.default_rng(seed)
    if manual:
        r = manual[int(rng.integers(len(manual)))]
        auto = [p for p in pooled if p not in set(manual)]
        S = sorted(auto[i] for i in rng.choice(len(auto), size=width, replace=False))
    else:
        chosen = [pooled[i] for i in rng.choice(len(pooled), size=width + 1, replace=False)]
        r, S = chosen[0], sorted(chosen[1:])
    run_r = runs[(runs["name"] == r).to_numpy()]
    runs_s = top[top["name"].isin(S).to_numpy()]
    q_s = pooling.repool(runs_s, qrels, pool_depth)
    m_raw, m_cond, m_judged = sample_measures(pool_depth, rbp_p)
    pt = measures.evaluate(run_r, q_s, [m_raw, m_cond, m_judged], per_topic=True)
    # per topic (in the qid dictionary's order): the true score t, read from ``true`` (the
    # run's scores on the full qrels, computed once), and on Q_S u (unjudged = irrelevant), c
    # (condensed lists) and the share judged
    true_r = true[(true["name"] == r).to_numpy()]
    tq = true_r["qid"].cat.codes.to_numpy()
    pq = pt["qid"].cat.codes.to_numpy()
    qids = np.union1d(tq, pq)
    t = _by_topic(qids, tq, true_r["value"].to_numpy())
    meas = pt["measure"].astype("str").to_numpy()
    u, c, judged = (
        _by_topic(qids, pq[meas == m], pt["value"].to_numpy()[meas == m])
        for m in (m_raw, m_cond, m_judged)
    )
    est = corrections.estimate(
        runs_s,
        run_r[run_r["rank"].to_numpy() <= pool_depth],
        q_s,
        depth=pool_depth,
        measures=[m_raw],
        estimators=["webber"],
        replace=True,
    )
    w = est.loc[est["estimator"] == "webber", "value"]
    webber = float(w.iloc[0]) if len(w) else np.nan  # NaN: no estimate (counted, not scored)
    sample = {
        "width": width,
        "repeat": repeat,
        "seed": seed,
        "unpooled": r,
        "pooled": pooling.SEP.join(S),
        "n_topics": len(t),
        "true": t.mean(),
        "unadjusted": u.mean(),
        "condensed": c.mean(),
        "webber_runs": webber,
        "judged_share": pd.Series(judged).mean(),  # over the topics Q_S judges (NaN skipped)
        # Eqs. 3-5: σ²_t (variance of the true scores) and σ²_a (MSE of the adjusted per-topic
        # scores x_i + A, A the true mean error: the variance of t − x)
        "var_true": t.var(),
        "mse_adjusted": (t - u).var(),
        "mse_adjusted_condensed": (t - c).var(),
    }
    # the rows of ``errors``, as columns: Table 1, then per n, table and estimator the J samples
    cols: dict[str, list] = {k: [] for k in ("table", "lists", "common_topics", "estimator")}
    sample_no, estimate = [np.zeros(2, dtype=np.int64)], [np.array([u.mean(), webber])]

    def rows(k: int, table: int, lists: str, n: int, estimators) -> None:
        cols["table"].append(np.full(k, table, dtype=np.int64))
        cols["lists"].append(np.full(k, lists, dtype=object))
        cols["common_topics"].append(np.full(k, n, dtype=np.int64))
        cols["estimator"].append(np.asarray(estimators, dtype=object))

    rows(2, 1, "irrelevant", 0, ["unadjusted", "adjusted_runs"])
    for n in common:
        n_eff = min(int(n), len(t) - 1)
        masks = topic_masks(rng, len(t), n_eff, topic_samples)
        for table, lists, x in ((2, "irrelevant", u), (3, "condensed", c)):
            for estimator, values in common_topic_estimates(t, x, masks).items():
                rows(topic_samples, table, lists, n_eff, [estimator] * topic_samples)
                sample_no.append(np.arange(topic_samples))
                estimate.append(values)
    errors = pd.DataFrame(
        {
            **{k: np.concatenate(v) for k, v in cols.items()},
            "sample": np.concatenate(sample_no),
            "true": t.mean(),
            "estimate": np.concatenate(estimate),
            "width": width,
            "repeat": repeat,
        }
    )
    for k in ("lists", "estimator"):
        errors[k] = errors[k].astype("str")
    return {"sample": sample, "errors": errors}
