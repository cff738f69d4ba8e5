"""The dense engine: the encoded leave-out problem and the machinery every estimator scores with.

Between :mod:`pbtools.measures` (the one scoring engine's kernels) and :mod:`pbtools.pooling` /
:mod:`pbtools.corrections` in the import order: it imports only frames, validation, groups,
threads and measures; the pooling strategies, the papers' algorithms (:mod:`pbtools.corrections`)
and the experiments (:mod:`pbtools.experiments`) call it.

=============================  ============================================================
module                         holds
=============================  ============================================================
``engine.dense``               :class:`DenseRuns`: runs and qrels documents as dense
                               per-topic arrays (runs added to an encoding without
                               re-encoding it: ``extended``), who pooled what
``engine.histograms``          label histograms: the variants' relevance sets
``engine.problem``             :class:`Problem`: the runs to score, their relevance-set
                               variants, R_p and the pool, and their scoring (one class)
``engine.build``               the one builder of the leave-out variants (:func:`repool`,
                               :func:`leave_out_labels`), :func:`from_frames`,
                               :class:`FittedPool` (a pool encoded once, runs to score
                               added per problem), :class:`EncodedPool`
``engine.units``               leave-out units (:func:`unit_map`) and R_p (:class:`PairSpec`)
``engine.chunks``              the runs to score a chunk at a time (R_p pairs never all
                               in memory)
``engine.merge``               r_p ∘ r_u (Lipani Eq. 2) for every pair and topic at once
``engine.shared_merges``       the merged runs scored for every problem in one pass
``engine.losses``              Webber & Park's per-(pair, topic) losses
``engine.rowgroups``           rows the engine would score identically, grouped exactly
``engine.parallel``            the ordered, memory-bounded thread map
=============================  ============================================================
"""
