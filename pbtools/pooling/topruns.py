"""The best fraction of the runs per measure (Lipani et al. 2015 §5, PROTOCOL-lipani2015 item 9),
and how a tie of scores at the cut is broken and reported."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.frames import encode, group_starts, ranks_from_starts, require_columns
from pbtools.measures.rounding import round_half_up

__all__ = ["TIE_RULES", "TopTieWarning", "top_fraction"]


#: how :func:`top_fraction` breaks a tie of scores that the cut falls inside
TIE_RULES = {
    "order": "the tied runs in input order (an analysis: name order) fill the places left",
    "include": "every tied run is kept (more than ⌊frac·N⌋ runs)",
    "exclude": "no tied run is kept (fewer than ⌊frac·N⌋ runs)",
}


class TopTieWarning(UserWarning):
    """The top-fraction cut fell inside a tie of run scores (:func:`top_fraction`)."""


def top_fraction(
    scores: pd.DataFrame,
    frac: float = 0.75,
    decimals: int | None = 4,
    ties: str = "order",
) -> pd.DataFrame:
    """The best ``frac`` of the runs per measure (Lipani §5; PROTOCOL-lipani2015 item 9).

    Per measure the values are rounded half-up to ``decimals`` places
    (:func:`pbtools.measures.round_half_up`; None: no rounding), sorted descending with a
    *stable* sort (equal rounded scores keep the input order), and the first c = ⌊frac·N⌋ runs
    are kept (N = 36, frac = 0.75 → 27).

    When the cut falls inside a tie — the c-th and the (c+1)-th runs have the same rounded
    score — which of the tied runs are kept is a choice, ``ties`` (:data:`TIE_RULES`):
    ``"order"`` (the default, as PROTOCOL item 9 and the authors' code: the stable sort's input
    order decides, exactly c runs), ``"include"`` (every tied run kept) or ``"exclude"`` (every
    tied run dropped). Each such tie is reported: a :class:`TopTieWarning` and, in
    ``out.attrs["ties"]``, one record per measure with ``measure``, ``cut`` (c), ``n`` (N),
    ``score`` (the tied rounded score), ``tied`` (the tied runs, in order), ``kept`` (those of
    them kept) and ``rule``.

    Parameters
    ----------
    scores : DataFrame
        Averages (``name``, ``measure``, ``value``), e.g. every pooled run scored on the full
        re-pooled qrels. ``frac`` (float), ``decimals`` (int or None): above.
    ties : {"order", "include", "exclude"}
        The rule for a tie at the cut (above).

    Returns
    -------
    DataFrame
        The kept rows (``name``, ``measure``, ``value`` unrounded, + other columns) in that
        order, with ``rank`` (int32, 1 = best) added; ``attrs["ties"]`` as above.

    Examples
    --------
    ⌊0.75 · 4⌋ = 3 runs are kept; c's 0.40004 rounds to 0.4000 and ties with b, which comes
    first in the input, so b ranks first:

    >>> import pandas as pd
    >>> s = pd.DataFrame({"name": list("abcd"), "measure": "AP", "value": [.2, .4, .40004, .1]})
    >>> top_fraction(s, 0.75)
      name measure    value  rank
    0    b      AP  0.40000     1
    1    c      AP  0.40004     2
    2    a      AP  0.20000     3

    With a and d tied at 0.2 the cut (3 of 4) falls inside the tie:

    >>> import warnings
    >>> s2 = s.assign(value=[.2, .4, .3, .2])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", TopTieWarning)
    ...     [top_fraction(s2, ties=t)["name"].tolist() for t in ("order", "include", "exclude")]
    [['b', 'c', 'a'], ['b', 'c', 'a', 'd'], ['b', 'c']]
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", TopTieWarning)
    ...     top_fraction(s2).attrs["ties"][0]["kept"]
    ['a']
    """
    if ties not in TIE_RULES:
        raise InputError(f"ties must be one of {sorted(TIE_RULES)}, got {ties!r}")
    require_columns(scores, ("name", "measure", "value"), "scores")
    v = scores["value"].to_numpy(dtype=np.float64)
    if decimals is not None:
        v = round_half_up(v, decimals)
    meas = encode(scores["measure"])
    m = meas.cat.codes.to_numpy().astype(np.int64)
    order = np.lexsort((np.arange(len(v)), -v, m))
    ms, vs = m[order], v[order]
    rank = ranks_from_starts(group_starts(ms))
    count = np.bincount(ms, minlength=len(meas.cat.categories))
    cut = np.floor(frac * count + 1e-9).astype(np.int64)
    keep = rank <= cut[ms]
    # the score of each measure's last kept run, and whether the first dropped one ties it
    first = np.concatenate([[0], np.cumsum(count)[:-1]])
    inside = (cut >= 1) & (cut < count)
    at = np.where(inside, first + cut - 1, 0)
    edge = np.where(inside, vs[at] if len(vs) else 0.0, np.nan)
    tie = inside & (vs[np.minimum(at + 1, max(len(vs) - 1, 0))] == edge if len(vs) else inside)
    tied = tie[ms] & (vs == edge[ms])
    if ties == "include":
        keep |= tied
    elif ties == "exclude":
        keep &= ~tied
    out = scores.iloc[order[keep]].reset_index(drop=True)
    out["rank"] = rank[keep].astype(np.int32)
    names = scores["name"].astype(str).to_numpy(dtype=object)[order]
    records = []
    for c in np.flatnonzero(tie):  # the measures whose cut falls in a tie: a handful
        rows = np.flatnonzero(tied & (ms == c))
        records.append(
            {
                "measure": str(meas.cat.categories[c]),
                "cut": int(cut[c]),
                "n": int(count[c]),
                "score": float(edge[c]),
                "tied": names[rows].tolist(),
                "kept": names[rows[keep[rows]]].tolist(),
                "rule": ties,
            }
        )
        r = records[-1]
        warnings.warn(
            f"top {frac:.0%} of {r['measure']}: the cut after {r['cut']} of {r['n']} runs falls "
            f"inside a tie at {r['score']:g} of {', '.join(r['tied'])}; ties={ties!r} kept "
            f"{', '.join(r['kept']) or 'none of them'} ({TIE_RULES[ties]}); "
            "the other rules: " + ", ".join(repr(t) for t in TIE_RULES if t != ties),
            TopTieWarning,
            stacklevel=2,
        )
    out.attrs["ties"] = records
    return out
