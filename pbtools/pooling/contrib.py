"""The former name of :mod:`pbtools.pooling.who_pooled` (deprecated; import from there).

Kept only while code written against ``pbtools.pooling.contrib`` is updated: importing it warns
(``DeprecationWarning``) and re-exports the same objects.
"""

import warnings

from pbtools.pooling.who_pooled import (
    Contrib,
    contrib_table,
    keyed,
    locate,
    qrels_owner,
    stack_blocks,
    top_rows,
    unit_column,
    unit_map,
)

__all__ = [
    "top_rows",
    "unit_map",
    "Contrib",
    "contrib_table",
    "locate",
    "qrels_owner",
    "keyed",
    "unit_column",
    "stack_blocks",
]

warnings.warn(
    "pbtools.pooling.contrib is now pbtools.pooling.who_pooled; import from there",
    DeprecationWarning,
    stacklevel=2,
)
