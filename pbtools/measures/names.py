"""Measure names: the grammar that turns ``P@10`` or ``RBP(p=0.8)@10`` into a :class:`Measure`.

ir_measures' grammar ``BASE[']( param=value, ... )@cutoff``: BASE one of :data:`MEASURES`
(case-insensitive, plus aliases such as ``MAP``, ``MRR``, ``ndcg``), parameters ``rel`` (int ≥ 1:
labels ≥ rel are relevant), ``p`` (RBP), ``beta`` (Q), ``judged_only`` and ``cutoff``.

pbtools' extensions: ``AntiP@n`` (P̄, the share of the top n judged non-relevant), ``Unjudged@n``
(k̄, the share unjudged), ``Judged@n`` (ir_measures' judged rate) and the condensed list of any
other measure, ``(judged_only=True)`` (aliases: ``condensed=True`` and a trailing ``'`` as in
``AP'``; Sakai 2008 §3, trec_eval ``-J``).

trec_eval names are accepted on input: ``P_10``, ``recall_100``, ``map``, ``map_cut_10``,
``ndcg``, ``ndcg_cut_10``, ``bpref``, ``Rprec``, ``recip_rank``, ``success_10``, ``num_ret``,
``num_rel``, ``num_rel_ret`` and ``rbp`` (= ``RBP(p=0.9)``); :attr:`Measure.trec_name` gives
them back.

Canonical names: ``str(m)`` is ``BASE(params)@cutoff`` with only the non-default parameters (RBP
always shows ``p``), and ``parse(str(m)) == m``. Result frames name their measures this way
(:func:`measure_column`, the one place where parsed measures become strings again: a result
frame's ``measure`` column). What each measure computes: :mod:`pbtools.measures`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pbtools.errors import InputError
from pbtools.measures.params import (
    EXTRA_PARAMS,
    MIN_GEO_MEAN,
    parse_param,
    show_param,
    split_params,
    to_bool,
    to_number,
)
from pbtools.measures.registry import (
    FAMILIES,
    MeasureFamily,
    find,
    trec_input,
    trec_spellings,
)

__all__ = [
    "Measure",
    "parse",
    "parse_all",
    "MEASURES",
    "MIN_GEO_MEAN",
    "measure_names",
    "measure_column",
    "measure_list",
    "as_measure",
]

#: every measure family by name (:data:`pbtools.measures.registry.FAMILIES`): the grammar reads
#: each family's cut-off rule, parameters, aliases and trec_eval names there
MEASURES = FAMILIES
_GRAMMAR = re.compile(r"^\s*([A-Za-z]+)\s*(')?\s*(?:\((.*)\))?\s*(?:@\s*([\d.]+))?\s*$")


@dataclass(frozen=True)
class Measure:
    """A parsed measure: ``base`` name, optional ``cutoff``, relevance threshold ``rel``,
    ``judged_only`` (condensed list) and the RBP persistence ``p`` / Q's ``beta``.

    ``str(m)`` is the canonical name: ``BASE(params)@cutoff`` with only non-default parameters
    (RBP always shows ``p``: ir_measures defaults to 0.8, trec_eval to 0.9).

    Parameters
    ----------
    base : str
        One of :data:`MEASURES`.
    cutoff : int, optional
        The ``@n`` rank cut-off.
    rel : int
        Labels ``>= rel`` are relevant: trec_eval ``-l`` for the binary measures; for nDCG
        and Q, labels below ``rel`` also gain 0 (trec_eval's ndcg ignores ``-l``; see
        :mod:`pbtools.measures.evaluate`).
    judged_only : bool
        Score the condensed list (unjudged documents removed; Sakai 2008 §3).
    p, beta : float, optional
        RBP's persistence, Q's and SetF's ``beta`` (None for the other measures).
    extra : tuple of (name, value)
        The other parameters, sorted, defaults left out (:data:`~.params.EXTRA_PARAMS`:
        ``mult``, ``recall``, ``relative``, ``gains``, ``a``–``d``, ``docs``, ``padded``,
        ``graded``); :meth:`get` reads one.

    Examples
    --------
    >>> m = Measure("nDCG", 10)
    >>> str(m), m.trec_name, parse(str(m)) == m
    ('nDCG@10', 'ndcg_cut_10', True)
    >>> str(Measure("AP", rel=2, judged_only=True))
    'AP(rel=2,judged_only=True)'
    """

    base: str
    cutoff: int | None = None
    rel: int = 1
    judged_only: bool = False
    p: float | None = None
    beta: float | None = None
    extra: tuple = ()

    def get(self, key: str):
        """The value of parameter ``key`` of :data:`EXTRA_PARAMS` (its default when not given).

        >>> parse("Rprec(mult=0.2)").get("mult"), parse("Rprec").get("mult")
        (0.2, 1.0)
        """
        for k, v in self.extra:
            if k == key:
                return v
        f = find(self.base)
        return f.default(key) if f is not None else EXTRA_PARAMS[key][1]

    @property
    def family(self) -> MeasureFamily:
        """The declaration of this measure's family (:func:`pbtools.measures.family`)."""
        f = find(self.base)
        if f is None:
            raise InputError(f"unknown measure {self.base!r}; valid measures: {_valid_names()}")
        return f

    def __str__(self) -> str:
        params = []
        if self.p is not None:
            params.append(f"p={self.p:g}")
        if self.beta is not None and self.beta != 1.0:
            params.append(f"beta={self.beta:g}")
        if self.rel != 1:
            params.append(f"rel={self.rel}")
        if self.judged_only:
            params.append("judged_only=True")
        f = find(self.base)
        at = f.at if f is not None else None
        params += [f"{k}={show_param(v)}" for k, v in self.extra if k != at]
        s = self.base + (f"({','.join(params)})" if params else "")
        if at is not None:
            return s + f"@{show_param(self.get(at))}"
        return s + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def trec_name(self) -> str:
        """trec_eval's name for this measure (``P_10``, ``map``, ``ndcg_cut_10``, ...).

        Measures trec_eval does not have (AntiP, Unjudged, Q, condensed lists, ...) keep their
        pbtools name. A non-default relevance threshold corresponds to trec_eval's ``-l``, which
        is not part of its measure names, so it is not shown either — except for nDCG, whose
        ``rel`` trec_eval has no counterpart of (its ndcg ignores ``-l``): ``nDCG(rel=2)``
        keeps its pbtools name.

        >>> parse("nDCG(rel=2)@10").trec_name, parse("P(rel=2)@10").trec_name
        ('nDCG(rel=2)@10', 'P_10')
        """
        f = find(self.base)
        name = f.trec_name(self) if f is not None else None
        return str(self) if name is None else name

    @property
    def summed(self) -> bool:
        """True for the counts that trec_eval sums rather than averages over topics."""
        return self.family.aggregate == "sum"

    @property
    def geometric(self) -> bool:
        """True for the measures averaged by a geometric mean (``GMAP``, ``GMBpref``)."""
        return self.family.aggregate == "geometric"

    @property
    def text(self) -> bool:
        """True for the string measures (``Relstring``): a ``text`` per topic, no average."""
        return self.family.aggregate == "text"


def _valid_names() -> str:
    return ", ".join(FAMILIES) + f" (trec_eval: {', '.join(trec_spellings())})"


def parse(name: str | Measure) -> Measure:
    """Parse a measure name into a :class:`Measure` (ir_measures grammar + trec_eval names).

    ``BASE[']( param=value, ... )@cutoff`` with BASE one of :data:`MEASURES` (case-insensitive,
    plus aliases such as ``MAP``, ``MRR``, ``ndcg``); parameters ``rel`` (int ≥ 1), ``p``
    (0 < p < 1, RBP; default 0.8), ``beta`` (≥ 0, Q; default 1), ``judged_only``/``condensed``
    (bool), ``cutoff``. trec_eval names: ``P_10``, ``recall_100``, ``map``, ``map_cut_10``,
    ``ndcg``, ``ndcg_cut_10``, ``bpref``, ``Rprec``, ``recip_rank``, ``success_10``,
    ``num_ret``, ``num_rel``, ``num_rel_ret``, ``rbp`` (= ``RBP(p=0.9)``).

    Raises :class:`~pbtools.errors.InputError` (a ``ValueError``) naming the measure and listing
    the valid ones.

    Parameters
    ----------
    name : str or Measure
        A measure name (a :class:`Measure` is returned unchanged).

    Returns
    -------
    Measure

    Examples
    --------
    >>> parse("ndcg_cut_10")
    Measure(base='nDCG', cutoff=10, rel=1, judged_only=False, p=None, beta=None, extra=())
    >>> str(parse("iprec_at_recall_0.10")), str(parse("Rprec_mult_0.20")), str(parse("unj_5"))
    ('IPrec@0.1', 'Rprec(mult=0.2)', 'Unjudged(padded=False)@5')
    >>> str(parse("RBP@10")), str(parse("AP'")), parse("P_10") == parse("p@10")
    ('RBP(p=0.8)@10', 'AP(judged_only=True)', True)
    >>> parse("P")
    Traceback (most recent call last):
    ...
    pbtools.errors.InputError: measure 'P': P needs a cut-off, e.g. P@10
    """
    if isinstance(name, Measure):
        return name
    text = str(name)
    found = trec_input(text.strip())
    if found is not None:
        f, params = found
        cut = params.pop("cutoff", None)
        return _build(text, f, None if cut is None else int(cut), params, False)
    m = _GRAMMAR.match(text)
    f = find(m.group(1)) if m else None
    if f is None:
        raise InputError(f"unknown measure {text!r}; valid measures: {_valid_names()}")
    params: dict[str, object] = {}
    for part in filter(None, (s.strip() for s in split_params(m.group(3) or ""))):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep:
            raise InputError(f"measure {text!r}: parameter {part!r} is not key=value")
        params[key] = value
    at = m.group(4)
    if at and f.at:
        params[f.at] = at
        at = None
    cut = to_number(int, at, "cutoff", text) if at else None
    if "cutoff" in params:
        cut = to_number(int, params.pop("cutoff"), "cutoff", text)
    return _build(text, f, cut, params, bool(m.group(2)))


def _build(text: str, f: MeasureFamily, cut: int | None, params: dict, prime: bool) -> Measure:
    base, cut_rule, allowed = f.name, f.cutoff, f.params
    if "condensed" in params:
        params["judged_only"] = params.pop("condensed")
    if prime:
        params["judged_only"] = "True"
    bad = sorted(set(params) - set(allowed))
    if bad:
        raise InputError(
            f"measure {text!r}: unknown parameter(s) {bad}; {base} accepts "
            f"{list(allowed) + (['cutoff'] if cut_rule != 'none' else [])}"
        )
    if cut_rule == "required" and cut is None:
        raise InputError(f"measure {text!r}: {base} needs a cut-off, e.g. {base}@10")
    if cut_rule == "none" and cut is not None:
        raise InputError(f"measure {text!r}: {base} takes no cut-off")
    if cut is not None and cut < 1:
        raise InputError(f"measure {text!r}: the cut-off must be ≥ 1")
    rel = to_number(int, params.get("rel", 1), "rel", text)
    if rel < 1:
        raise InputError(f"measure {text!r}: rel must be ≥ 1 (labels ≥ rel are relevant)")
    jo = params.get("judged_only", False)
    jo = to_bool(jo, text) if isinstance(jo, str) else bool(jo)
    p = to_number(float, params.get("p", f.default("p")), "p", text) if "p" in allowed else None
    if p is not None and not 0 < p < 1:
        raise InputError(f"measure {text!r}: {base} needs 0 < p < 1")
    has_beta = "beta" in allowed
    beta = (
        to_number(float, params.get("beta", f.default("beta")), "beta", text) if has_beta else None
    )
    if beta is not None and beta < 0:
        raise InputError(f"measure {text!r}: {base} needs beta ≥ 0")
    extra = []
    for key in sorted(set(params) & set(EXTRA_PARAMS)):
        value = parse_param(EXTRA_PARAMS[key][0], params[key], key, text)
        if value != f.default(key):
            extra.append((key, value))
    if f.at and f.at not in params:
        raise InputError(f"measure {text!r}: {base} needs a {f.at} level, e.g. {base}@0.1")
    if cut is None and f.default_cutoff is not None:
        cut = f.default_cutoff  # trec_eval's relstring: the first 10 documents
    return Measure(base, cut, rel, jo, p, beta, tuple(extra))


def parse_all(measures) -> list[Measure]:
    """Parse one measure or several (:func:`parse`), dropping duplicates, keeping the order.

    Parameters
    ----------
    measures : str, Measure or an iterable of them

    Returns
    -------
    list of Measure
        At least one; an empty list raises :class:`~pbtools.errors.InputError`.

    Examples
    --------
    >>> [str(m) for m in parse_all(["P_10", "P@10", "map"])]
    ['P@10', 'AP']
    """
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    out: list[Measure] = []
    for m in measures:
        pm = parse(m)
        if pm not in out:
            out.append(pm)
    if not out:
        raise InputError("no measures given")
    return out


def measure_names(measures: Iterable) -> list[str]:
    """Canonical names of ``measures`` (deduplicated, in the order given).

    Parameters
    ----------
    measures : iterable of str or Measure

    Returns
    -------
    list of str

    Examples
    --------
    >>> measure_names(["P_10", "P@10", "ndcg_cut_10", "rbp"])
    ['P@10', 'nDCG@10', 'RBP(p=0.9)']
    """
    return [str(m) for m in parse_all(measures)]


def measure_column(measures: Iterable[Measure]) -> list[str]:
    """The ``measure`` column's strings for parsed ``measures``: their canonical names.

    Measures are parsed once where they enter (the command line or a public function,
    :func:`parse_all`) and travel inward as :class:`Measure` objects; this is where they turn
    back into strings — when a result frame's ``measure`` column (or its metadata) is written.
    A string given here is refused: parse it first.

    Parameters
    ----------
    measures : iterable of Measure

    Returns
    -------
    list of str

    Examples
    --------
    >>> measure_column(parse_all(["P_10", "ndcg_cut_10"]))
    ['P@10', 'nDCG@10']
    >>> measure_column(["P@10"])
    Traceback (most recent call last):
    ...
    TypeError: measure_column takes parsed measures (pbtools.measures.parse_all), got 'P@10'
    """
    return [str(as_measure(m, "measure_column")) for m in measures]


def as_measure(m, where: str) -> Measure:
    """``m`` itself if it is a :class:`Measure`; ``TypeError`` naming ``where`` otherwise — the
    guard of the inner functions, which take parsed measures only (no second parse)."""
    if not isinstance(m, Measure):
        raise TypeError(f"{where} takes parsed measures (pbtools.measures.parse_all), got {m!r}")
    return m


def measure_list(measures, where: str) -> list[Measure]:
    """``measures`` (parsed ones) as a list, each checked by :func:`as_measure`.

    >>> measure_list(parse_all(["AP"]), "here")
    [Measure(base='AP', cutoff=None, rel=1, judged_only=False, p=None, beta=None, extra=())]
    """
    return [as_measure(m, where) for m in measures]
