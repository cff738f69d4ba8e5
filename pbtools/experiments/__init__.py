"""Experiments over whole collections: leave-one-out estimation and ``pbtools analyze``.

=========================  ================================================================
module                     holds
=========================  ================================================================
``experiments.leaveout``   :func:`leave_one_out_experiment(s)`
``experiments.load``       :func:`load` (how a protocol preset reads a track)
``experiments.analysis``   :func:`~pbtools.experiments.analysis.analyze` and
                           :class:`~pbtools.experiments.analysis.Analysis` (what ``pbtools
                           analyze`` runs)
``experiments.configs``    ``analyze``'s options — :class:`Reading`, :class:`Design`,
                           :class:`Execution` — and the one scheduler
                           (:meth:`Execution.plan`: threads, worker processes, Dask)
``experiments.tracks``     :func:`~pbtools.experiments.tracks.analyze_tracks`: several
                           collections as one grid (Dask)
=========================  ================================================================
"""

from pbtools.experiments.configs import Design, Execution, Reading
from pbtools.experiments.leaveout import leave_one_out_experiment, leave_one_out_experiments
from pbtools.experiments.load import load

__all__ = [
    "Design",
    "Execution",
    "Reading",
    "leave_one_out_experiment",
    "leave_one_out_experiments",
    "load",
]
