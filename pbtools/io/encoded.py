"""Runs and qrels as codes and dictionaries: the arrays behind the run and qrels frames.

A run frame's ``name``, ``qid`` and ``docno`` are pandas ``Categorical`` columns; an
:class:`EncodedRuns` holds the same thing without pandas: for each id column its dictionary
(a ``pyarrow`` string array, in the order of the frame's categories) and one integer code a row,
beside ``score`` and ``rank``. :class:`EncodedQrels` is the same for qrels (``label`` instead of
``score`` and ``rank``). The command line's ``evaluate`` works on these (importing pandas costs
~0.45 s of a TREC-sized evaluation); the Python API's frames are built from them
(:meth:`EncodedRuns.frame`) and turn back into them (:meth:`EncodedRuns.from_frame`) without
changing a value, a code or an order.

Nothing here imports pandas at module level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pbtools.io.repairs import Repairs


def _strings(values) -> pa.Array:
    """A dictionary as a ``pyarrow`` string array (a pandas ``Index``, a list or an array)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        return values.cast(pa.string())
    return pa.array(np.asarray(values, dtype=object), type=pa.string())


def _categorical(codes: np.ndarray, dictionary: pa.Array):
    """A pandas ``Categorical`` of ``codes`` over ``dictionary`` (its categories, in order)."""
    import pandas as pd

    from pbtools.ids import dictionary_dtype

    return pd.Categorical.from_codes(codes, dtype=dictionary_dtype(dictionary), validate=False)


def _repairs(df) -> Repairs | None:
    """The repairs a reader's frame carries (``attrs["repairs"]``), or None."""
    frame = df.attrs.get("repairs")
    return None if frame is None else Repairs.from_frame(frame)


def _codes_and_dictionary(col) -> tuple[np.ndarray, pa.Array]:
    """A categorical frame column's codes and its categories as a ``pyarrow`` array."""
    return np.asarray(col.cat.codes), _strings(col.cat.categories)


@dataclass
class EncodedRuns:
    """Runs as codes over dictionaries (no pandas): row ``i`` is run ``names[name[i]]``, topic
    ``qids[qid[i]]``, document ``docnos[docno[i]]``, with ``score[i]`` and ``rank[i]``.

    The rows, codes and dictionaries are those of the run frame :func:`pbtools.io.read_runs`
    returns (trec order: name, qid, score descending, docno descending; ``rank`` 1..n in that
    order). ``repairs`` holds what ``lenient=True`` repaired (:class:`pbtools.io.repairs.Repairs`,
    or ``None``).

    Examples
    --------
    >>> import pyarrow as pa, numpy as np
    >>> e = EncodedRuns(pa.array(["a"]), pa.array(["1"]), pa.array(["d1", "d2"]),
    ...                 np.zeros(2, np.int32), np.zeros(2, np.int32), np.array([1, 0], np.int32),
    ...                 np.array([2.0, 1.0]), np.array([1, 2], np.int32))
    >>> len(e), e.frame()["docno"].tolist()
    (2, ['d2', 'd1'])
    >>> EncodedRuns.from_frame(e.frame()).docno.tolist()
    [1, 0]
    """

    names: pa.Array
    qids: pa.Array
    docnos: pa.Array
    name: np.ndarray
    qid: np.ndarray
    docno: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    repairs: Repairs | None = None

    def __len__(self) -> int:
        return len(self.score)

    def frame(self):
        """The run frame (``name``, ``qid``, ``docno``, ``score``, ``rank``), as
        :func:`pbtools.io.read_runs` returns it (repairs not attached)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "name": _categorical(self.name, self.names),
                "qid": _categorical(self.qid, self.qids),
                "docno": _categorical(self.docno, self.docnos),
                "score": self.score,
                "rank": self.rank,
            },
            copy=False,
        )

    @classmethod
    def from_frame(cls, runs) -> EncodedRuns:
        """The codes and dictionaries of a run frame with categorical ``name``, ``qid`` and
        ``docno`` (a reader's frame; see :func:`pbtools.frames.encode_ids` for others)."""
        name, names = _codes_and_dictionary(runs["name"])
        qid, qids = _codes_and_dictionary(runs["qid"])
        docno, docnos = _codes_and_dictionary(runs["docno"])
        return cls(
            names,
            qids,
            docnos,
            name,
            qid,
            docno,
            np.asarray(runs["score"], dtype=np.float64),
            np.asarray(runs["rank"]),
            _repairs(runs),
        )


@dataclass
class EncodedQrels:
    """Qrels as codes over dictionaries (no pandas): row ``i`` judges document
    ``docnos[docno[i]]`` for topic ``qids[qid[i]]`` with ``label[i]``; rows, codes and
    dictionaries those of :func:`pbtools.io.read_qrels`' frame.

    Examples
    --------
    >>> import pyarrow as pa, numpy as np
    >>> q = EncodedQrels(pa.array(["1"]), pa.array(["d1", "d2"]), np.zeros(2, np.int8),
    ...                  np.array([0, 1], np.int8), np.array([1, 0], np.int16))
    >>> q.frame()["label"].tolist()
    [1, 0]
    """

    qids: pa.Array
    docnos: pa.Array
    qid: np.ndarray
    docno: np.ndarray
    label: np.ndarray
    repairs: Repairs | None = None

    def __len__(self) -> int:
        return len(self.label)

    def frame(self):
        """The qrels frame (``qid``, ``docno``, ``label``), as :func:`pbtools.io.read_qrels`
        returns it (repairs not attached)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "qid": _categorical(self.qid, self.qids),
                "docno": _categorical(self.docno, self.docnos),
                "label": self.label,
            },
            copy=False,
        )

    @classmethod
    def from_frame(cls, qrels) -> EncodedQrels:
        """The codes and dictionaries of a qrels frame with categorical ``qid`` and ``docno``."""
        qid, qids = _codes_and_dictionary(qrels["qid"])
        docno, docnos = _codes_and_dictionary(qrels["docno"])
        return cls(qids, docnos, qid, docno, np.asarray(qrels["label"]), _repairs(qrels))
