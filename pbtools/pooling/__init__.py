"""Pools: who pooled what, pool inference, reduced pools and reports on a collection's pool.

=========================  ================================================================
module                     holds
=========================  ================================================================
``pooling.who_pooled``     the contributions table (who pooled what) every other module reads
``pooling.strategies``     pooling strategies (depth-d, take-N, RBP, MTF, Hedge, MaxMean, fusion,
                           sampling), their registry and :func:`~strategies.parse`
``pooling.pool``           :class:`Pool`: what was judged, how, and the reductions on it;
                           :meth:`Pool.simulate` replays a strategy against existing judgments
``pooling.combinations``   unit combinations for take-k-teams and run-subset pools
``pooling.inference``      :func:`infer_pool`, :func:`judged_prefixes`, :data:`POLICIES`
                           (PROTOCOL items 4-6)
``pooling.reductions``     :func:`pool`, :func:`repool`, :func:`leave_one_out`,
                           :func:`take_teams`, :func:`subset_pool`, :func:`shallow`,
                           :func:`top_fraction` (from ``pooling.topruns``, with its tie
                           rules :data:`TIE_RULES` and :class:`TopTieWarning`)
``pooling.contributions``  :func:`unique_contributions`, :func:`describe`
``pooling.sampled``        :func:`sampled_qrels`: a sampled pool's universe, strata, labels
                           and inclusion probabilities (read by ``measures.sampled``)
=========================  ================================================================
"""

from pbtools.engine.build import unit_map
from pbtools.pooling import strategies
from pbtools.pooling.contributions import describe, unique_contributions
from pbtools.pooling.inference import (
    ALIASES,
    DEFAULT_POLICY,
    POLICIES,
    POLICY_CHOICES,
    EmptyPoolError,
    Policy,
    PoolInfo,
    get_policy,
    infer_pool,
    judged_prefixes,
)
from pbtools.pooling.pool import Pool
from pbtools.pooling.reductions import (
    SEP,
    contributions,
    leave_one_out,
    pool,
    repool,
    shallow,
    subset_pool,
    take_teams,
    top_fraction,
)
from pbtools.pooling.sampled import is_sampling, sampled_qrels
from pbtools.pooling.topruns import TIE_RULES, TopTieWarning

__all__ = [
    "Pool",
    "strategies",
    "pool",
    "repool",
    "contributions",
    "leave_one_out",
    "take_teams",
    "shallow",
    "subset_pool",
    "top_fraction",
    "TIE_RULES",
    "TopTieWarning",
    "unit_map",
    "unique_contributions",
    "describe",
    "infer_pool",
    "judged_prefixes",
    "PoolInfo",
    "POLICIES",
    "POLICY_CHOICES",
    "ALIASES",
    "DEFAULT_POLICY",
    "EmptyPoolError",
    "Policy",
    "get_policy",
    "SEP",
    "sampled_qrels",
    "is_sampling",
]
