"""Experiments over whole collections: leave-one-out estimation and ``pbtools analyze``.

=========================  ================================================================
module                     holds
=========================  ================================================================
``experiments.leaveout``   :func:`leave_one_out_experiment(s)`
``experiments.load``       :func:`load` (how a protocol preset reads a track)
``experiments.analysis``   :func:`~pbtools.experiments.analysis.analyze` and
                           :class:`~pbtools.experiments.analysis.Analysis` (what ``pbtools
                           analyze`` runs)
``experiments.configs``    :func:`~pbtools.experiments.configs.run_configs`: how ``analyze``
                           runs its configurations (threads, worker processes, Dask)
``experiments.tracks``     :func:`~pbtools.experiments.tracks.analyze_tracks`: several
                           collections as one grid (Dask)
=========================  ================================================================
"""

from pbtools.experiments.leaveout import leave_one_out_experiment, leave_one_out_experiments
from pbtools.experiments.load import load

__all__ = ["leave_one_out_experiment", "leave_one_out_experiments", "load"]
