"""``python -m pbtools`` runs the command line (:mod:`pbtools.cli`)."""

import sys

from pbtools.cli import main

sys.exit(main())
