"""``python -m pbtools`` runs the command line (:mod:`pbtools.cli`)."""

from pbtools.cli import entry

entry()
