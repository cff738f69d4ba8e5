"""The dense engine: the encoded leave-out problem and the machinery every estimator scores with.

Between :mod:`pbtools.measures` (the one scoring engine's kernels) and :mod:`pbtools.pooling` /
:mod:`pbtools.corrections` in the import order: it imports only frames, validation, groups,
threads and measures; the pooling strategies, the papers' algorithms (:mod:`pbtools.corrections`)
and the experiments (:mod:`pbtools.experiments`) call it.

=============================  ============================================================
module                         holds
=============================  ============================================================
``engine.dense``               :class:`DenseRuns`: runs and qrels documents as dense
                               per-topic arrays, label histograms, who pooled what
``engine.problem``             :class:`Problem`: the runs to score, their relevance-set
                               variants, R_p and the pool, and their scoring (one class)
``engine.build``               the one builder of the leave-out variants (:func:`repool`,
                               :func:`leave_out_labels`) and of R_p (:class:`PairSpec`),
                               :func:`from_frames`, :func:`unit_map`, :class:`EncodedPool`
``engine.chunks``              the runs to score a chunk at a time (R_p pairs never all
                               in memory)
``engine.merge``               r_p ∘ r_u (Lipani Eq. 2) for every pair and topic at once
``engine.shared_merges``       the merged runs scored for every problem in one pass
``engine.losses``              Webber & Park's per-(pair, topic) losses
``engine.rowgroups``           rows the engine would score identically, grouped exactly
``engine.parallel``            the ordered, memory-bounded thread map
=============================  ============================================================
"""
