"""Reporting on a collection's pool: unique contributions and the collection summary.

* :func:`unique_contributions` — Buckley et al. §1 (unique relevant documents: score each
  group's runs with and without the relevant documents only that group pooled) and Sakai §4,
  Table 2 (#unique contributions and #unique relevant documents per topic, per team).
* :func:`describe` — the collection summary behind ``pbtools pool`` (Lipani Table 2's first
  columns): |R| run ids, |O| organisations, |R_p| pooled runs, pool depth d, |T| qrels topics.

Both are built on the contributions table of :mod:`pbtools.pooling` (whose private helpers they
share) and stay importable from there: ``pooling.unique_contributions``, ``pooling.describe``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from pbtools.engine.build import unit_map
from pbtools.frames import encode, require_columns, used_codes
from pbtools.pooling.inference import DEFAULT_POLICY, infer_pool
from pbtools.pooling.who_pooled import contrib_table, qrels_owner, stack_blocks, top_rows
from pbtools.validation import validates

__all__ = ["unique_contributions", "describe"]


# --------------------------------------------------------------------------------------------
# unique contributions (Buckley; Sakai Table 2)
# --------------------------------------------------------------------------------------------


@validates(runs="run", qrels="qrels", orgs="orgs")
def unique_contributions(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    orgs: pd.DataFrame | None,
    depth: int,
    measures: Sequence[str] = ("AP",),
    *,
    unit: str = "org",
    pooled: Iterable[str] | None = None,
    per_run: bool = False,
) -> pd.DataFrame:
    """Per organisation: unique (relevant) pool contributions and what they are worth to its runs.

    Buckley et al. §1 (score a group's runs with and without its unique relevant documents) and
    Sakai §4, Table 2 (#unique contributions and #unique relevant documents per topic). U_t are
    the documents only organisation t placed in the top ``depth`` of its pooled runs (the
    contributions with ``n_units == 1``), U_t^rel those with label > 0 in ``qrels``. Each pooled
    run of t is scored (``pbtools.measures.evaluate``) on ``qrels`` and on ``qrels`` without
    U_t^rel (rows removed: unjudged), in one join keyed by ``left_out``.

    Parameters
    ----------
    runs : DataFrame
        Run columns; the pooled runs, or restrict them with ``pooled`` (run names).
    qrels : DataFrame
        ``qid``, ``docno``, ``label``.
    orgs : DataFrame or None
        ``name``, ``org``; ``unit="run"`` treats every run as its own organisation.
    depth : int
        The pool depth d.
    measures : sequence of str
        Names as in :mod:`pbtools.measures`.
    unit : {"org", "run"}
    pooled : iterable of str, optional
    per_run : bool
        Return the per-run scores instead (below).

    Returns
    -------
    DataFrame
        One row per (org, measure): ``org``, ``runs`` (pooled runs of the org), ``unique`` and
        ``unique_rel`` (|U_t| and |U_t^rel| per topic, averaged over the pool's topics),
        ``measure``, ``mean_diff`` and ``max_diff`` (mean and maximum over the org's runs of the
        percentage drop 100·(full − without)/full; runs with a zero full score are skipped, NaN
        when all are).

        ``per_run=True`` returns instead the per-run scores the averages are taken over, one
        row per (pooled run, measure), sorted by ``org``, ``name``, ``measure``: ``name``,
        ``org`` (its organisation), ``measure``, ``full`` (score on ``qrels``), ``without``
        (score on ``qrels`` without U_t^rel of its organisation t) and ``diff_pct``
        (100·(full − without)/full, NaN when full is 0). The mean / max of ``diff_pct`` over an
        org's runs are its ``mean_diff`` / ``max_diff``; the same single evaluation pass
        produces both frames.

    Examples
    --------
    Organisation X runs a (top 2: docs 1, 2) and b (2, 4), Y runs c (5, 1). U_X = {2, 4},
    U_X^rel = {4}; U_Y = {5}, not relevant. R = 4 (docs 1, 3, 4, 9). Run b finds doc 4 at rank
    2: AP = (1/2)/4 = 0.125 in full, 0 without doc 4 (drop 100 %). Run a (docs 1, 2, 3) has
    AP = (1/1 + 2/3)/4 = 0.417 in full and (1 + 2/3)/3 = 0.556 without: R shrinks, so AP
    *rises* (−33.3 %). X's mean drop is (100 − 33.3)/2 = 33.3 %.

    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": list("aaabbcc"), "qid": "1",
    ...                             "docno": list("1232451"), "score": [3, 2, 1, 3, 2, 2, 1]}))
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("123459"), "label": [1, 0, 1, 1, 0, 1]})
    >>> orgs = pd.DataFrame({"name": ["a", "b", "c"], "org": ["X", "X", "Y"]})
    >>> unique_contributions(runs, qrels, orgs, 2).round(1)
      org  runs  unique  unique_rel measure  mean_diff  max_diff
    0   X     2     2.0         1.0      AP       33.3     100.0
    1   Y     1     1.0         0.0      AP        0.0       0.0
    >>> unique_contributions(runs, qrels, orgs, 2, per_run=True).round(3)
      name org measure   full  without  diff_pct
    0    a   X      AP  0.417    0.556   -33.333
    1    b   X      AP  0.125    0.000   100.000
    2    c   Y      AP  0.125    0.125     0.000
    """
    from pbtools import measures as _measures

    require_columns(qrels, ("qid", "docno", "label"), "qrels")
    top = top_rows(runs, depth, pooled)
    c = contrib_table(top, unit, orgs, qrels)
    owner = qrels_owner(c)
    n_topics = max(len(np.unique(c.keys // max(len(c.dcats), 1))), 1)
    single = c.owner[c.owner >= 0]
    uniq = np.bincount(single, minlength=len(c.units)) / n_topics
    rel = qrels["label"].to_numpy() > 0
    uniq_rel = np.bincount(owner[(owner >= 0) & rel], minlength=len(c.units)) / n_topics
    labels = list(c.units)
    keep = ~((owner[None, :] == np.arange(len(labels))[:, None]) & rel[None, :])
    reduced = stack_blocks(qrels, keep, labels, "left_out")
    pooled_runs = top["name"].astype("str").unique()
    umap = unit_map(pooled_runs, unit, orgs)
    scored = runs.loc[encode(runs["name"]).astype("str").isin(pooled_runs).to_numpy()]
    scored = scored.assign(left_out=encode(scored["name"].astype("str").map(umap)))
    full = _measures.evaluate(scored.drop(columns="left_out"), qrels, list(measures), warn=False)
    without = _measures.evaluate(scored, reduced, list(measures), keys=["left_out"])
    both = (
        full[["name", "measure", "value"]]
        .astype({"name": "str", "measure": "str"})
        .merge(
            without[["name", "measure", "value"]].astype({"name": "str", "measure": "str"}),
            on=["name", "measure"],
            suffixes=("_full", "_without"),
        )
    )
    both["org"] = both["name"].map(umap)
    f, w = both["value_full"].to_numpy(), both["value_without"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        both["diff"] = np.where(f > 0, 100.0 * (f - w) / f, np.nan)
    if per_run:
        runs_out = both.rename(
            columns={"value_full": "full", "value_without": "without", "diff": "diff_pct"}
        )
        runs_out = runs_out.sort_values(["org", "name", "measure"], ignore_index=True)
        for col in ("name", "org", "measure"):
            runs_out[col] = encode(runs_out[col])
        return runs_out[["name", "org", "measure", "full", "without", "diff_pct"]]
    agg = (
        both.groupby(["org", "measure"], sort=True)
        .agg(mean_diff=("diff", "mean"), max_diff=("diff", "max"))
        .reset_index()
    )
    n_runs = pd.Series(umap.to_numpy()).value_counts()
    base = pd.DataFrame(
        {
            "org": labels,
            "runs": n_runs.reindex(labels).fillna(0).astype(int).to_numpy(),
            "unique": uniq,
            "unique_rel": uniq_rel,
        }
    )
    out = base.merge(agg, on="org", how="left")
    out["org"] = encode(out["org"])
    return out[["org", "runs", "unique", "unique_rel", "measure", "mean_diff", "max_diff"]]


# --------------------------------------------------------------------------------------------
# collection summary (CLI: ``pbtools pool``)
# --------------------------------------------------------------------------------------------


def describe(
    collection,
    *,
    policy: str = DEFAULT_POLICY,
    tolerance: float | None = None,
) -> dict:
    """Summarise a collection's pool: the figures of Lipani Table 2's first columns.

    Pool inference by :func:`pbtools.pooling.inference.infer_pool` (``policy``, ``tolerance``).

    Parameters
    ----------
    collection : pbtools.io.Collection
        Or any object with ``runs``, ``qrels``, ``orgs`` (and ``files`` when present).
    policy : str
        A name of :data:`pbtools.pooling.inference.POLICY_CHOICES`.
    tolerance : float, optional
        Overrides the policy's t (:func:`~pbtools.pooling.inference.infer_pool`).

    Returns
    -------
    dict
        JSON-ready: ``runs``, ``orgs``, ``pooled_runs``, ``unpooled_runs``, ``unmapped`` (runs
        the orgs do not list; each is its own organisation), ``depth``, ``topics`` (the qids of
        the qrels' rows), ``policy`` (the rule's canonical name,
        :data:`pbtools.pooling.inference.POLICIES`), and the counts ``|R|`` (run ids), ``|O|``
        (organisations of the runs), ``|R_p|``, ``d``, ``|T|`` (qrels topics), plus ``|R| files``
        and ``|R_p| files`` counting run *files* (differ from ``|R|``, ``|R_p|`` when files
        share a tag, as TREC-2's ``input.prc1``/``input.prc2`` do with ``prceo1``).

    Examples
    --------
    Runs b (docs 2, 4) and c (5, 1) have judged prefix 2, a (1, 2, 3) 3: d = 2.

    >>> import pandas as pd
    >>> from types import SimpleNamespace
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": list("aaabbcc"), "qid": "1",
    ...                             "docno": list("1232451"), "score": [3, 2, 1, 3, 2, 2, 1]}))
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("123459"), "label": [1, 0, 1, 1, 0, 1]})
    >>> orgs = pd.DataFrame({"name": ["a", "b", "c"], "org": ["X", "X", "Y"]})
    >>> d = describe(SimpleNamespace(runs=runs, qrels=qrels, orgs=orgs))
    >>> {k: d[k] for k in ("|R|", "|O|", "|R_p|", "d", "|T|")}
    {'|R|': 3, '|O|': 2, '|R_p|': 3, 'd': 2, '|T|': 1}
    """
    runs, qrels, orgs = collection.runs, collection.qrels, getattr(collection, "orgs", None)
    info = infer_pool(runs, qrels, policy, tolerance=tolerance)
    names = sorted(encode(runs["name"]).cat.categories.astype(str).tolist())
    if orgs is not None and len(orgs):
        umap = unit_map(names, "org", orgs)
        listed = set(orgs["name"].astype("str"))
    else:
        umap, listed = unit_map(names, "run"), set(names)
    org_names = sorted(set(umap.tolist()))
    topics = used_codes(qrels["qid"])[1].astype(str).tolist()  # rows, not the categories
    files = getattr(collection, "files", None)
    if files is not None and len(files):
        per_name = files["name"].astype("str").value_counts()
        r_files = int(per_name.sum())
        rp_files = int(per_name.reindex(info.pooled_runs).fillna(1).sum())
    else:
        r_files, rp_files = len(names), len(info.pooled_runs)
    return {
        "runs": names,
        "orgs": org_names,
        "pooled_runs": info.pooled_runs,
        "unpooled_runs": info.unpooled_runs,
        "unmapped": [n for n in names if n not in listed],
        "depth": info.depth,
        "topics": topics,
        "policy": info.policy,
        "|R|": len(names),
        "|O|": len(org_names),
        "|R_p|": len(info.pooled_runs),
        "d": info.depth,
        "|T|": len(topics),
        "|R| files": r_files,
        "|R_p| files": rp_files,
    }
