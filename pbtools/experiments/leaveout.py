"""Leave-one-out experiments over whole collections (Lipani et al. 2015 §5; Webber & Park §3.1).

:func:`leave_one_out_experiment` withdraws each unit (organisation or run) of a collection's pool
in turn, scores every evaluated pooled run of that unit on the qrels without the unit's
contributions with every estimator of the registry, and compares it with its true score. The
result feeds :func:`pbtools.stats.mae`, :func:`~pbtools.stats.sre` and
:func:`~pbtools.stats.error_table` directly (``name``, ``true``, ``estimate`` + keys).

Steps (PROTOCOL-lipani2015 item numbers):

1. ``pooled``/``depth`` default to :func:`pbtools.pooling.infer_pool` (items 4-6).
2. ``runs="all"``: the run set S = the pooled runs; ``runs="top75"``: per measure, S = the best
   ⌊fraction·|R_p|⌋ pooled runs on the full re-pooled qrels (:func:`pbtools.pooling.top_fraction`,
   item 9) — and the whole experiment is redone inside S.
3. The truth is the score on the re-pool of S at depth d (items 7, 14).
4. For every unit the reduced qrels are the re-pool of S without the unit (item 8); each run of S
   that ``orgs`` lists (runs it does not list stay in the pool but are never evaluated, item 1)
   is scored on its unit's reduced qrels, with R_p = S \\ {r_u} (``rp="run"``, item 12) or
   S \\ unit (``rp="org"``).

Implementation: the pooled runs and the qrels are encoded once into the dense layout of
:mod:`pbtools.engine.dense`; the truth and every unit's reduced qrels are label arrays derived
from one table of who pooled what; r_p ∘ r_u is merged once for every pair of pooled runs and
shared by every run set; every score comes from the one scoring engine through
:class:`pbtools.engine.problem.Problem`.

With ``protocol="lipani2015"`` it reproduces the "Ad Hoc 2" rows of Lipani et al. 2015 Table 2
exactly (tests/papers/test_lipani2015.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from pbtools.corrections.base import RESULT_COLUMNS
from pbtools.engine import chunks
from pbtools.engine.build import EncodedPool, PairSpec, leave_out_variants
from pbtools.engine.dense import DenseRuns, pooled_rows
from pbtools.engine.parallel import ordered_map, resolve_threads
from pbtools.errors import InputError
from pbtools.experiments.chunked import estimate_in_chunks
from pbtools.experiments.load import load
from pbtools.frames import as_qrels, encode, is_trec_ordered, ranked, require_columns
from pbtools.ids import index_in
from pbtools.measures.kernels import depth_needed
from pbtools.measures.names import measure_column, parse_all
from pbtools.measures.topics import topic_mask
from pbtools.pooling.topruns import top_fraction
from pbtools.presets import resolve

__all__ = [
    "MEASURES",
    "SCORE_COLUMNS",
    "leave_one_out_experiment",
    "leave_one_out_experiments",
    "experiment_tables",
]

#: the measures of Lipani et al. 2015 Table 2
MEASURES = ("P@5", "P@10", "P@20", "P@30", "P@100")
#: the columns of an experiment's result, in order
SCORE_COLUMNS = (
    "name",
    "measure",
    "estimator",
    "runs",
    "left_out",
    "true",
    "estimate",
    *RESULT_COLUMNS[4:],
)


def leave_one_out_experiment(
    collection_or_frames,
    measures: Sequence[str] = MEASURES,
    leave_out: str = "org",
    runs: str = "all",
    estimators: Iterable[str] = ("reduced", "webber", "lipani"),
    protocol: str | None = None,
    **options,
) -> pd.DataFrame:
    """Leave-one-unit-out estimation errors over a collection (Lipani §5, PROTOCOL 7-16).

    Parameters
    ----------
    collection_or_frames
        A track directory, an io ``Collection`` or ``(runs, qrels, orgs)`` frames.
    measures : sequence of str
        Measures to estimate; every estimator scores those it supports (Lipani: P@n).
    leave_out : {"org", "run"}
        The unit withdrawn from the pool.
    runs : {"all", "top75"}
        The run set (step 2 of the module docstring).
    estimators : iterable of str
        Names of :data:`pbtools.corrections.ESTIMATORS` (``true`` is always computed).
    protocol : str, optional
        ``"lipani2015"`` selects every choice of the paper (:mod:`pbtools.presets`).
    **options
        ``pooled`` (run names), ``depth``, ``fraction`` (0.75), ``progress``, ``threads``
        (:func:`experiment_tables`) and the choices ``weight``, ``tie``, ``indicator``, ``rp``,
        ``decimals``, ``replace``, ``topics``, ``pool_policy``.

    Returns
    -------
    DataFrame
        :data:`SCORE_COLUMNS`: one row per (run, measure, estimator): ``runs``, ``left_out``
        (the unit), ``true``, ``estimate`` and the estimator's indicators.

    Examples
    --------
    A small synthetic collection (:func:`pbtools.synth.generate`) pooled to depth 10 by four
    runs of organisations o01 and o03; leaving o01 out, the reduced pool scores o01r1 0.26
    instead of 0.36. MAE = mean |true − estimate|: (0.10 + 0.06 + 0.02 + 0.02) / 4 = 0.05.

    >>> from pbtools import synth
    >>> from pbtools.stats import error_table
    >>> c = synth.generate(topics=5, docs=60, runs=6, orgs=3, run_length=20, depth=10, seed=1)
    >>> res = leave_one_out_experiment((c.runs, c.qrels, c.orgs), ["P@10"],
    ...                                estimators=["reduced", "webber"], pooled=c.pooled, depth=10)
    >>> res.loc[res["estimator"] == "reduced", ["name", "left_out", "true", "estimate"]]
        name left_out  true  estimate
    0  o01r1      o01  0.36      0.26
    1  o01r2      o01  0.24      0.18
    2  o03r1      o03  0.26      0.24
    3  o03r2      o03  0.24      0.22
    >>> error_table(res[["name", "measure", "estimator", "true", "estimate"]]).round(4)
      measure estimator   mae  sre  sre_star
    0    P@10   reduced  0.05    2      <NA>
    1    P@10    webber  0.04    1      <NA>
    """
    cfg = {"leave_out": leave_out, "runs": runs}
    tables = experiment_tables(
        collection_or_frames, [cfg], measures, estimators, protocol, **options
    )
    return tables[0][0]


def leave_one_out_experiments(
    collection_or_frames,
    configs: Sequence[dict],
    measures: Sequence[str] = MEASURES,
    estimators: Iterable[str] = ("reduced", "webber", "lipani"),
    protocol: str | None = None,
    **options,
) -> list[pd.DataFrame]:
    """:func:`leave_one_out_experiment` for several ``configs`` (dicts with ``leave_out`` and
    ``runs``) that share one encoding of the pooled runs and one merge r_p ∘ r_u of every pair.
    Returns one frame per config, in order."""
    tables = experiment_tables(
        collection_or_frames, configs, measures, estimators, protocol, **options
    )
    return [scores for scores, _truth in tables]


def experiment_tables(
    collection_or_frames,
    configs: Sequence[dict],
    measures: Sequence[str] = MEASURES,
    estimators: Iterable[str] = ("reduced", "webber", "lipani"),
    protocol: str | None = None,
    *,
    pooled: Iterable[str] | None = None,
    depth: int | None = None,
    fraction: float = 0.75,
    progress: bool | None = False,
    threads: int | None = None,
    top_ties: str = "order",
    **choices,
) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """The experiments of ``configs`` and, for each, the per-topic truth of its evaluated runs.

    Returns ``(scores, truth)`` per config: ``scores`` as :func:`leave_one_out_experiment`;
    ``truth`` the true per-topic scores (``runs``, ``measure``, ``name``, ``qid``, ``value``)
    over every qrels topic, a topic a run lacks scoring as an empty ranking (the balanced design
    the paired statistics behind SRE* need, trec_eval ``-c``).

    ``threads``: how many blocks (a configuration's run set, or one measure's top-75 set) are
    built and finished at once (None: the usable cores, capped —
    :func:`~pbtools.engine.parallel.default_threads`; 1: one after the other, the least
    memory). The results are the same whatever the count.

    ``top_ties``: how a tie of scores at the top-``fraction`` cut is broken
    (:data:`pbtools.pooling.TIE_RULES`); each such tie is warned about
    (:class:`pbtools.pooling.TopTieWarning`) and listed in ``scores.attrs["top75_ties"]`` of
    the ``top75`` configurations.
    """
    opts = resolve(protocol, **choices)
    for cfg in configs:
        if cfg.get("runs", "all") not in ("all", "top75"):
            raise InputError(f"runs must be 'all' or 'top75', got {cfg['runs']!r}")
        if cfg.get("leave_out", "org") not in ("org", "run"):
            raise InputError(f"leave_out must be 'org' or 'run', got {cfg['leave_out']!r}")
    ms = parse_all(measures)
    estimators = [e for e in estimators if e != "true"]
    R, Q, O = load(collection_or_frames, protocol=protocol)
    require_columns(O, ("name", "org"), "orgs")
    # run → organisation of every run orgs lists (a name listed twice: its last row)
    org_of = dict(zip(O["name"].astype(str), O["org"].astype(str), strict=True))
    pool_names, d = _pool_info(R, Q, pooled, depth, str(opts["pool_policy"]))
    name = encode(R["name"])
    in_pool = name.cat.categories.isin(pd.Index(pool_names, dtype="str"))
    keep = in_pool[name.cat.codes.to_numpy()]
    # the pooled rows' encoded columns only (no copy of the whole frame); whole runs are
    # dropped, so runs in trec order stay so
    require_columns(R, ("qid", "docno", "score"), "run")
    ordered = "rank" in R.columns and is_trec_ordered(R)
    S = pooled_rows(R, keep) if ordered else ranked(R[keep])
    Q = as_qrels(Q)
    enc = DenseRuns([S], [Q])
    del S, keep  # not kept through the estimation
    slots = enc.slots(0)
    lab, present, _ = enc.labels(Q)
    base = EncodedPool(enc, lab[0], present[0], d, str(opts["topics"]), opts["decimals"])
    blocks_of = {"all": [(ms, slots)]}
    tied: list[dict] = []  # the ties at the top-fraction cut (top_fraction's records)
    if any(cfg.get("runs", "all") == "top75" for cfg in configs):
        blocks_of["top75"], tied = _top_blocks(base, slots, ms, fraction, top_ties)
    from pbtools.progress import progress_bar

    bar = progress_bar(len(configs), progress, "leave-one-out")
    # the blocks' problems (without their pairs), then the estimators on them one chunk of runs
    # to score at a time (:mod:`pbtools.engine.chunks`: the pairs of runs and the variants'
    # dense labels never all in memory; one streamed pass per chunk merges its pairs for every
    # block of a wave, the blocks whose compact variants fit
    # :data:`~pbtools.engine.chunks.LABEL_BYTES` together); built, estimated and finished on a
    # few threads (numpy releases the GIL in the big array work), in block order: the results
    # are the same whatever the thread count
    threads = resolve_threads(threads)
    specs = [
        (cfg.get("leave_out", "org"), bms, b)
        for cfg in configs  # a handful of configurations
        for bms, b in blocks_of[cfg.get("runs", "all")]
    ]
    # each block's compact variants: the truth and at most one removed cell a (topic, document)
    label_bytes = [enc.T * enc.U * (base.lab0.itemsize + 4) for _spec in specs]
    outs = []
    for wave in chunks.waves(label_bytes):  # one wave unless the label arrays are large
        outs += _wave(base, opts, org_of, [specs[i] for i in wave], estimators, threads)
    done = iter(outs)
    built = [(cfg.get("runs", "all"), blocks_of[cfg.get("runs", "all")]) for cfg in configs]
    results = []
    for runs, blocks in built:
        if bar is not None:
            bar.update(1)
        parts = [next(done) for _ in blocks]
        scores = pd.concat([p[0] for p in parts], ignore_index=True)
        scores.insert(3, "runs", runs)
        truth = pd.concat([p[1] for p in parts], ignore_index=True)
        truth.insert(0, "runs", runs)
        if runs == "top75":
            scores.attrs["top75_ties"] = tied
        results.append((scores, truth))
    if bar is not None:
        bar.close()
    return results


def _wave(base: EncodedPool, opts: dict, org_of: dict, specs, estimators, threads: int) -> list:
    """The blocks of ``specs`` built (:func:`_build`), estimated together a chunk of runs to
    score at a time, and finished (:func:`_finish`): their ``(scores, truth)``, in order."""
    rp = str(opts["rp"])
    made = list(ordered_map(lambda s: _build(base, org_of, s[2], s[0], rp), specs, threads))
    tasks = [(s[1], pc) for s, pc in zip(specs, made, strict=True)]
    estimated = estimate_in_chunks(
        [(bms, problem, ctx[2], ctx[3]) for bms, (problem, ctx) in tasks],
        estimators,
        opts,
        threads,
    )
    finish = ordered_map(
        lambda i: _finish(base, *tasks[i], estimated[i]), range(len(tasks)), threads, ahead=0
    )
    return list(finish)


def _pool_info(runs, qrels, pooled, depth, policy):
    if pooled is not None and depth is not None:
        return list(map(str, pooled)), int(depth)
    from pbtools.pooling.inference import infer_pool

    info = infer_pool(runs, qrels, policy=policy)
    return (
        list(map(str, pooled)) if pooled is not None else list(info.pooled_runs),
        int(depth) if depth is not None else int(info.depth),
    )


def _top_blocks(base: EncodedPool, slots: np.ndarray, ms, fraction: float, ties: str = "order"):
    """Per measure, the best ``fraction`` of the pooled runs on the full re-pooled qrels, and
    the ties at the cut (:func:`~pbtools.pooling.top_fraction`, ``ties`` its rule)."""
    truth = base.truth(slots)[None]
    p = base.problem(slots, truth, slots, np.zeros(len(slots), np.int64), 0)
    p.decimals = None
    values = p.run_scores(slots, np.zeros(len(slots), np.int64), ms)
    names = np.asarray(base.enc.names)[slots]  # slots are in name order
    scores = pd.DataFrame(
        {
            "name": np.tile(names, len(ms)),
            "measure": np.repeat(measure_column(ms), len(slots)),
            "value": values.T.ravel(),
        }
    )
    kept = top_fraction(scores, frac=fraction, ties=ties)
    blocks = []
    for m in ms:  # a handful of measures
        keep = kept.loc[kept["measure"] == str(m), "name"].astype(str)
        blocks.append(([m], np.sort(slots[np.isin(names, keep.to_numpy())])))
    return blocks, kept.attrs["ties"]


def _build(base: EncodedPool, org_of: dict, block, leave_out, rp: str):
    """One run set S (``block``): the :class:`Problem` of its evaluated runs on the truth,
    without pairs, and what :func:`_finish` and the chunks need besides (the run → unit map,
    the units, the pairs' :class:`~pbtools.engine.build.PairSpec`, and the units' reduced qrels
    in compact form with the variant of each evaluated run: a chunk of runs writes out its own
    variants, :func:`~pbtools.engine.chunks.sub_problem`). ``org_of``: the organisation of
    every run the orgs frame lists."""
    enc = base.enc
    names = np.asarray(enc.names)
    bnames = names[block]
    # the evaluated runs: those of S that orgs lists, each with its unit
    unit_of = {n: (org_of[n] if leave_out == "org" else n) for n in bnames if n in org_of}
    evaluated = sorted(unit_of)
    # units of every run of S (runs orgs does not list are their own organisation)
    unit_all = pd.Index(
        [org_of.get(n, n) if leave_out == "org" else n for n in bnames], dtype="str"
    )
    ulabels = pd.Index(sorted(set(unit_all)), dtype="str")
    eval_units = pd.Index(sorted(set(unit_of.values())), dtype="str")
    # the variants: every evaluated unit's reduced qrels, then the truth (compact)
    labels = leave_out_variants(
        enc,
        block,
        base.depth,
        base.lab0,
        ulabels.get_indexer(unit_all),
        len(ulabels),
        ulabels.get_indexer(eval_units),
    )
    u_slots = block[np.searchsorted(bnames, evaluated)]
    u_var = eval_units.get_indexer(pd.Index([unit_of[n] for n in evaluated], dtype="str"))
    # R_p: the runs of S of another unit (rp="org") or every other run (rp="run")
    if rp == "run":
        spec = PairSpec(u_slots, block, block)
    else:
        spec = PairSpec.from_labels(
            [unit_of[n] for n in evaluated], [unit_of.get(p, f"\0{p}") for p in bnames], block
        )
    on_truth = np.zeros(len(u_slots), np.int64)
    problem = base.problem(block, labels.truth[None], u_slots, on_truth, 0)
    problem.set_hist(labels.histograms(np.zeros(0, np.int64)))
    return problem, (unit_of, eval_units, spec, (labels, u_var.astype(np.int64)))


def _taken(values, index: np.ndarray):
    """The strings ``values[index]`` as the frames' string column: the distinct few made a
    string array once, then taken (not a string object per row converted); other values
    taken as they are."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "OUT":
        return arr[index]
    return pd.array(arr.astype(object), dtype="str").take(index)


def _finish(base: EncodedPool, ms, built, res):
    """The truth on one block's problem (:func:`_build`) and the rows of its estimators
    (``res``: :func:`estimate_in_chunks`) with it."""
    enc, (problem, (unit_of, *_rest)) = base.enc, built
    names = np.asarray(enc.names)
    u_slots = problem.new
    # the truth, scored once on every topic a run answers or the qrels judge: its mean over the
    # run's topics (``topics``) is ``true``, its rows on every qrels topic the balanced design
    # of the paired statistics (a topic the run lacks scoring as an empty ranking, ``-c``)
    tvar = np.full(len(u_slots), problem.truth_var, dtype=np.int64)
    answered = enc.length[u_slots] > 0
    judged = np.broadcast_to(base.present0, answered.shape)
    item, t, docs = enc.run_rows(u_slots, answered | judged, depth_needed(ms))
    values = problem.score_docs(docs, tvar[item], t, ms)
    own = topic_mask(answered, judged, problem.topics)[item, t]
    true_means = problem.rounded(problem.topic_means(item[own], t[own], values[own], len(u_slots)))
    # each result row's truth and unit, by its (run, measure) (a left join on names, in arrays)
    evaluated = names[u_slots]
    rn = res["name"].astype(str).to_numpy(dtype=object)
    rm = res["measure"].astype(str).to_numpy(dtype=object)
    run_i = index_in(pd.Index(rn, dtype="str"), pd.Index(evaluated, dtype="str"))
    m_i = index_in(pd.Index(rm, dtype="str"), pd.Index(measure_column(ms), dtype="str"))
    ok = (run_i >= 0) & (m_i >= 0)
    true = np.where(ok, true_means[run_i, m_i], np.nan)
    units = np.array([unit_of.get(n, np.nan) for n in evaluated], dtype=object)
    left_out = np.where(run_i >= 0, units[run_i], np.nan)
    # every qrels topic (the balanced design), plus any topic of a run's average the qrels
    # lack (``topics="answered"``); ``ranked`` flags the topics of the run's average, the
    # topics the significance tests behind SRE* use (:func:`pbtools.stats.pair_significance`)
    rows = judged[item, t] | own
    n_rows = int(rows.sum())
    truth_frame = pd.DataFrame(
        {
            "measure": _taken(measure_column(ms), np.repeat(np.arange(len(ms)), n_rows)),
            "name": _taken(evaluated, np.tile(item[rows], len(ms))),
            "qid": _taken(enc.qids, np.tile(t[rows], len(ms))),
            "value": values[rows].T.ravel(),
            "ranked": np.tile(own[rows], len(ms)),
        }
    )
    # rows by measure (in ``ms`` order), estimator, name; stable
    est = res["estimator"].astype(str).to_numpy(dtype=object)
    keys = [np.unique(k, return_inverse=True)[1].ravel() for k in (rn, est)]
    order = np.lexsort((*keys, np.where(m_i >= 0, m_i, len(ms))))
    extra = {"left_out": left_out, "true": true, "estimate": res["value"].to_numpy()}
    out = pd.DataFrame(
        {c: (extra[c] if c in extra else res[c].array)[order] for c in SCORE_COLUMNS if c != "runs"}
    )
    problem.forget()  # its cached per-topic scores: freed before the next block runs
    return out, truth_frame
