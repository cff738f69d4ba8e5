"""The names of the pool-inference rules (:mod:`pbtools.pooling.inference` holds the rules).

Kept apart, with no import, so that the command line can register its ``--policy`` option
without importing the pooling package (pandas, scipy): ``pbtools --help`` starts in a fraction
of the time (``benchmarks/startup.py``).
"""

from __future__ import annotations

#: the rules, in the order ``pbtools.pooling.inference.POLICIES`` lists them
POLICY_NAMES: tuple[str, ...] = ("paper", "snapshot2015", "later", "counted10")
#: older names, each mapped to the one rule it stands for
ALIASES: dict[str, str] = {"lipani2015": "paper", "per_run": "later"}
#: every accepted ``policy`` value (for command-line ``choices``)
POLICY_CHOICES: tuple[str, ...] = (*POLICY_NAMES, *ALIASES)
DEFAULT_POLICY = "paper"
