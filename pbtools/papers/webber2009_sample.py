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


def sample_task(
    width: int,
    repeat: int,
    seed: int,
    *,
    runs,
    top,
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
    ``top``: their top ``pool_depth`` (all that pooling and the Table 1 estimate need).
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
    m_raw = measures.measure_names([f"RBP(p={rbp_p})@{pool_depth}"])[0]
    m_cond = measures.measure_names([f"RBP(p={rbp_p},judged_only=True)@{pool_depth}"])[0]
    m_judged = f"Judged@{pool_depth}"
    both = pd.concat(
        [qrels.assign(condition="full"), q_s.assign(condition="pooled")], ignore_index=True
    )
    pt = measures.evaluate(
        run_r, both, [m_raw, m_cond, m_judged], keys=["condition"], per_topic=True
    )
    wide = pt.assign(key=pt["condition"].astype("str") + "|" + pt["measure"].astype("str"))
    wide = wide.pivot_table(index="qid", columns="key", values="value", observed=True)
    t = wide[f"full|{m_raw}"].to_numpy()
    u = wide[f"pooled|{m_raw}"].to_numpy()
    c = wide[f"pooled|{m_cond}"].to_numpy()
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
        "judged_share": wide[f"pooled|{m_judged}"].mean(),
        # Eqs. 3-5: σ²_t (variance of the true scores) and σ²_a (MSE of the adjusted per-topic
        # scores x_i + A, A the true mean error: the variance of t − x)
        "var_true": t.var(),
        "mse_adjusted": (t - u).var(),
        "mse_adjusted_condensed": (t - c).var(),
    }
    parts = [
        pd.DataFrame(
            {
                "table": 1,
                "lists": "irrelevant",
                "common_topics": 0,
                "estimator": ["unadjusted", "adjusted_runs"],
                "sample": 0,
                "true": t.mean(),
                "estimate": [u.mean(), webber],
            }
        )
    ]
    for n in common:
        n_eff = min(int(n), len(t) - 1)
        masks = topic_masks(rng, len(t), n_eff, topic_samples)
        for table, lists, x in ((2, "irrelevant", u), (3, "condensed", c)):
            for estimator, values in common_topic_estimates(t, x, masks).items():
                parts.append(
                    pd.DataFrame(
                        {
                            "table": table,
                            "lists": lists,
                            "common_topics": n_eff,
                            "estimator": estimator,
                            "sample": np.arange(topic_samples),
                            "true": t.mean(),
                            "estimate": values,
                        }
                    )
                )
    errors = pd.concat(parts, ignore_index=True).assign(width=width, repeat=repeat)
    return {"sample": sample, "errors": errors}
