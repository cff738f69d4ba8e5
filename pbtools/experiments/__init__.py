"""Experiments over whole collections: leave-one-out estimation and ``pbtools analyze``.

=========================  ================================================================
module                     holds
=========================  ================================================================
``experiments.leaveout``   :func:`leave_one_out_experiment(s)`, :func:`load`
``experiments.analysis``   :func:`analyze` and :class:`Analysis` (what ``pbtools analyze`` runs)
=========================  ================================================================
"""

from pbtools.experiments.leaveout import leave_one_out_experiment, leave_one_out_experiments, load

__all__ = ["leave_one_out_experiment", "leave_one_out_experiments", "load"]
