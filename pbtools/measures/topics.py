"""Which topics a run is averaged over: the one definition every command and function uses.

Three modes (the ``topics=`` parameter everywhere; the CLI's ``-c/--all-topics`` and
``--protocol lipani2015`` select the last two):

=============  ===============================================================================
mode           a run's score is the mean over
=============  ===============================================================================
``"judged"``   the topics it answers that the qrels judge (trec_eval; the default). A topic
               only the run answers is left out; a qrels topic the run lacks is left out.
``"all"``      every topic the qrels judge; one the run lacks scores as an empty ranking
               (trec_eval ``-c``).
``"answered"`` every topic the run answers; one the qrels lack scores against an empty
               relevance set, i.e. 0 for every gain measure (the 2015 code of Lipani et al.,
               PROTOCOL-lipani2015 item 14b).
=============  ===============================================================================

A qrels topic *judges* when the qrels have at least one line for it (any label; a topic whose
judgments are all non-relevant is evaluated and scores 0, as in trec_eval). :func:`topic_mask` is
the rule on boolean (run × topic) tables; :func:`topic_coverage` and :func:`warn_coverage`
report the topics that leave or enter averages, naming them.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from pbtools.errors import InputError, warn_deprecated

if TYPE_CHECKING:  # the frame functions load pandas when called; the array ones never do
    import pandas as pd

__all__ = [
    "TOPIC_MODES",
    "topics_mode",
    "topic_mask",
    "CoverageWarning",
    "topic_coverage",
    "warn_coverage",
    "coverage_table",
    "coverage_messages",
]

TOPIC_MODES = ("judged", "all", "answered")


def topics_mode(topics: str | None = None, all_topics: bool = False) -> str:
    """The averaging mode from ``topics`` (one of :data:`TOPIC_MODES`). ``all_topics=True``
    (trec_eval's ``-c``) is the deprecated spelling of ``topics="all"``: it still works, with a
    ``DeprecationWarning``. Raises ``InputError`` for an unknown mode or a contradiction.

    Parameters
    ----------
    topics : {"judged", "all", "answered"}, optional
        None means ``"judged"`` (trec_eval's default).
    all_topics : bool
        Deprecated: ``topics="all"``.

    Returns
    -------
    str
        One of :data:`TOPIC_MODES`.

    Examples
    --------
    >>> topics_mode(), topics_mode("all"), topics_mode("answered")
    ('judged', 'all', 'answered')
    """
    mode = "judged" if topics is None else str(topics)
    if mode not in TOPIC_MODES:
        raise InputError(f"topics must be one of {TOPIC_MODES}, got {topics!r}")
    if all_topics:
        warn_deprecated("all_topics=True", 'topics="all"')
        if topics is not None and mode != "all":
            raise InputError(f"all_topics=True contradicts topics={topics!r}")
        mode = "all"
    return mode


def topic_mask(answered: np.ndarray, judged: np.ndarray, topics: str = "judged") -> np.ndarray:
    """Which (run, topic) cells enter a run's average under ``topics`` (:data:`TOPIC_MODES`).

    ``answered``: runs × topics, the run has a ranking for the topic; ``judged``: topics (or
    runs × topics, one qrels variant per run), the qrels judge the topic.

    Parameters
    ----------
    answered : ndarray of bool, shape (runs, topics)
    judged : ndarray of bool, shape (topics,) or (runs, topics)
    topics : {"judged", "all", "answered"}

    Returns
    -------
    ndarray of bool, shape (runs, topics)

    Examples
    --------
    >>> answered = np.array([[True, True, False]])
    >>> judged = np.array([True, False, True])
    >>> [topic_mask(answered, judged, m).astype(int).tolist() for m in TOPIC_MODES]
    [[[1, 0, 0]], [[1, 0, 1]], [[1, 1, 0]]]
    """
    answered = np.asarray(answered, dtype=bool)
    judged = np.broadcast_to(np.asarray(judged, dtype=bool), answered.shape)
    if topics == "judged":
        return answered & judged
    if topics == "all":
        return judged.copy()
    if topics == "answered":
        return answered.copy()
    raise InputError(f"topics must be one of {TOPIC_MODES}, got {topics!r}")


class CoverageWarning(UserWarning):
    """Runs and qrels do not cover the same topics (see :func:`topic_coverage`).

    A :class:`UserWarning` subclass, so it can be filtered on its own (no parameters).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", CoverageWarning)  # silence the coverage reports
    ...     issubclass(CoverageWarning, UserWarning)
    True
    """


def topic_coverage(runs: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """Per run: the judged topics it did not answer and the topics it answered without judgments.

    Columns ``name``, ``n_missing``, ``missing`` (sorted qids), ``n_unjudged``, ``unjudged``;
    one row per run that differs from the qrels' topic set (an empty frame when all agree).
    How each mode averages them: :func:`topic_mask`.

    Parameters
    ----------
    runs : DataFrame
        ``name``, ``qid`` (other columns ignored).
    qrels : DataFrame
        ``qid``.

    Returns
    -------
    DataFrame

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"name": ["a", "a", "b"], "qid": ["1", "2", "1"]})
    >>> qrels = pd.DataFrame({"qid": ["1", "3"], "docno": "d", "label": 1})
    >>> topic_coverage(runs, qrels)
      name  n_missing missing  n_unjudged unjudged
    0    a          1     [3]           1      [2]
    1    b          1     [3]           0       []
    """
    import pandas as pd

    cats, names, has, judged = _coverage_inputs(runs, qrels)
    rows, missing, unjudged = coverage_table(has, judged)
    out = []
    for i in rows.tolist():
        m, u = cats[missing[i]].tolist(), cats[unjudged[i]].tolist()
        out.append((str(names[i]), len(m), m, len(u), u))
    return pd.DataFrame(out, columns=["name", "n_missing", "missing", "n_unjudged", "unjudged"])


def _coverage_inputs(runs: pd.DataFrame, qrels: pd.DataFrame):
    """The shared sorted topic dictionary, the run names, the (run × topic) table of answered
    topics and the judged topics of a run frame and a qrels frame."""
    from pbtools.frames import encode, unify

    rq, qq = unify(runs["qid"], qrels["qid"])
    cats = rq.cat.categories
    name = encode(runs["name"])
    has = np.zeros((len(name.cat.categories), len(cats)), dtype=bool)  # runs × topics: no sort
    has[name.cat.codes.to_numpy(), rq.cat.codes.to_numpy()] = True
    judged = np.zeros(len(cats), dtype=bool)
    judged[qq.cat.codes.to_numpy()] = True
    return cats, name.cat.categories, has, judged


def coverage_table(has: np.ndarray, judged: np.ndarray):
    """The runs that differ from the qrels' topic set, and each run's missing and unjudged
    topics: ``(rows, missing, unjudged)``, ``rows`` the indices of those runs (a run with no
    topic is left out), ``missing`` and ``unjudged`` (run × topic) boolean tables.

    Parameters
    ----------
    has : ndarray of bool, shape (runs, topics)
        The run answers the topic.
    judged : ndarray of bool, shape (topics,)
        The qrels judge the topic.

    Returns
    -------
    tuple of ndarray

    Examples
    --------
    >>> has = np.array([[True, True, False], [True, False, False]])
    >>> rows, missing, unjudged = coverage_table(has, np.array([True, False, True]))
    >>> rows.tolist(), missing[0].tolist(), unjudged[0].tolist()
    ([0, 1], [False, False, True], [False, True, False])
    """
    present = has.any(axis=1)
    missing, unjudged = judged[None, :] & ~has, has & ~judged[None, :]
    rows = np.flatnonzero(present & (missing.any(axis=1) | unjudged.any(axis=1)))
    return rows, missing, unjudged


def coverage_messages(
    has: np.ndarray, judged: np.ndarray, names, qids, topics: str = "judged"
) -> list[str]:
    """The texts of :func:`warn_coverage`'s warnings (none, one or two) from the arrays of
    :func:`coverage_table`: ``names`` the runs' names, ``qids`` the topics' (sorted), as
    sequences of ``str``.

    Examples
    --------
    >>> has = np.array([[True, False]])
    >>> coverage_messages(has, np.array([True, True]), ["a"], ["1", "2"])
    ["1 run(s) lack judged topics — a lacks 1 (2): their averages are over the topics they \
answered (trec_eval); -c / topics='all' scores them 0"]
    """
    rows, missing, unjudged = coverage_table(has, judged)
    out = []
    n_missing = missing[rows].sum(axis=1)
    lack = rows[n_missing > 0]
    if len(lack) and topics == "judged":
        parts = []
        for i in lack[:3].tolist():
            miss = [str(qids[j]) for j in np.flatnonzero(missing[i])[:3].tolist()]
            n = int(missing[i].sum())
            parts.append(f"{names[i]} lacks {n} ({', '.join(miss)}{', …' if n > 3 else ''})")
        out.append(
            f"{len(lack)} run(s) lack judged topics — {'; '.join(parts)}: their averages are "
            "over the topics they answered (trec_eval); -c / topics='all' scores them 0"
        )
    extra = rows[unjudged[rows].any(axis=1)]
    if len(extra):
        unj = [str(qids[j]) for j in np.flatnonzero(unjudged[extra].any(axis=0))[:11].tolist()]
        what = (
            "they score 0 there (topics='answered', the 2015 code's averaging)"
            if topics == "answered"
            else "those topics are not evaluated"
        )
        out.append(
            f"{len(extra)} run(s) answer topic(s) the qrels do not judge "
            f"({', '.join(unj[:10])}{', …' if len(unj) > 10 else ''}): {what}"
        )
    return out


def warn_coverage(runs: pd.DataFrame, qrels: pd.DataFrame, *, topics: str = "judged") -> None:
    """Warn (:class:`CoverageWarning`) once, naming them, about the topics that leave or enter
    a run's average under ``topics`` (:data:`TOPIC_MODES`): judged topics a run lacks, topics a
    run answers that the qrels do not judge, and qrels topics no run answers.

    Parameters
    ----------
    runs, qrels : DataFrame
        As in :func:`topic_coverage`.
    topics : {"judged", "all", "answered"}

    Returns
    -------
    None

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"name": ["a", "a"], "qid": ["1", "2"]})
    >>> qrels = pd.DataFrame({"qid": ["1"], "docno": "d", "label": 1})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_coverage(runs, qrels)
    >>> print(caught[0].message)
    1 run(s) answer topic(s) the qrels do not judge (2): those topics are not evaluated
    """
    cats, names, has, judged = _coverage_inputs(runs, qrels)
    for text in coverage_messages(has, judged, names, cats, topics):
        warnings.warn(CoverageWarning(text), stacklevel=3)
