"""Sampled-pool qrels: NIST ``sample_eval.pl``'s five-column format, read and written.

Each line is ``qid iter docno stratum label``: every document of the sampled *universe* (e.g.
the depth-100 pool) with its stratum and, when it was sampled, its label; a document of the
universe that was not sampled has label −1. The inclusion probability of a document is its
stratum's sampled share n_s / N_s, which the estimators of :mod:`pbtools.measures.sampled`
read off the counts (the frame's ``prob`` column, when present, is not written).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pbtools.frames import LABEL_DTYPE, TrecFormatError, composite_key, require_columns
from pbtools.ids import categorical_from_arrow
from pbtools.io.adapters import write_lines
from pbtools.io.fields import split_fields, to_int16
from pbtools.io.files import check_file
from pbtools.io.mistakes import is_sampled_qrels  # noqa: F401 (re-exported; pandas-free)
from pbtools.io.parse import duplicates

__all__ = ["read_sampled_qrels", "to_sampled_qrels", "is_sampled_qrels"]

#: lines read to decide (the first line with fields decides)


def read_sampled_qrels(path, *, lenient: bool = False) -> pd.DataFrame:
    """Read a sampled pool's qrels (``qid iter docno stratum label``, sample_eval.pl's format).

    Returns ``qid``, ``docno``, ``stratum`` (dictionary-encoded ids) and ``label`` (int16; −1:
    in the universe, not sampled), in file order. Raises :class:`TrecFormatError` naming the
    file and line for a line without five fields (``lenient=True`` skips short lines and keeps
    the first five fields of long ones), a non-integer label, or a document listed twice.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels")
    >>> _ = open(path, "w").write("1 0 d1 1 1\\n1 0 d2 2 -1\\n")
    >>> read_sampled_qrels(path)
      qid docno stratum  label
    0   1    d1       1      1
    1   1    d2       2     -1
    """
    check_file(path)
    f = split_fields(str(path), 5, (0, 2, 3, 4), lenient=lenient, what="sampled qrels")
    qid, docno, stratum, label = f.cols
    lab = to_int16(label, f, "relevance label")
    q, d = categorical_from_arrow([qid]), categorical_from_arrow([docno])
    key = composite_key([q.codes, d.codes], [len(q.categories), len(d.categories)])
    rep, first = duplicates(key)
    if len(rep):
        i, j = int(rep[0]), int(first[0])
        raise TrecFormatError(
            f"document {d[i]!r} of topic {q[i]!r} listed twice (first at line {f.line(j)})",
            str(path),
            f.line(i),
        )
    return pd.DataFrame(
        {
            "qid": q,
            "docno": d,
            "stratum": categorical_from_arrow([stratum]),
            "label": lab.astype(LABEL_DTYPE),
        }
    )


def to_sampled_qrels(qrels: pd.DataFrame, path) -> None:
    """Write a sampled pool's qrels (``qid``, ``docno``, ``stratum``, ``label``) in the
    five-column format of :func:`read_sampled_qrels` (``.gz`` → gzip), in row order, through
    the atomic writer.

    Examples
    --------
    >>> import tempfile, os
    >>> q = pd.DataFrame({"qid": "1", "docno": ["d1", "d2"], "stratum": [1, 2], "label": [1, -1]})
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels")
    >>> to_sampled_qrels(q, path)
    >>> open(path).read()
    '1 0 d1 1 1\\n1 0 d2 2 -1\\n'
    """
    require_columns(qrels, ("qid", "docno", "stratum", "label"), "sampled qrels")

    def text(col: pd.Series) -> pa.Array:
        return pa.array(col.astype("str").to_numpy(dtype=object), type=pa.string())

    zero = pa.array(np.full(len(qrels), "0", dtype=object), type=pa.string())
    label = pc.cast(pa.array(qrels["label"].to_numpy(dtype=np.int64)), pa.string())
    cols = [text(qrels["qid"]), zero, text(qrels["docno"]), text(qrels["stratum"]), label]
    write_lines(pc.binary_join_element_wise(*cols, " "), path)
