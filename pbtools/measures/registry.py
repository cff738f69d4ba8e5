"""Measure families: one declaration per measure, read by the parser, the engine and the CLI.

A *family* is what ir_measures calls a measure: ``P``, ``AP``, ``nDCG``… Its one declaration,
:func:`family`, next to its kernel, says everything pbtools knows about it:

* its ``name`` and ``aliases`` (the grammar, :func:`pbtools.measures.parse`);
* whether it takes a cut-off (``cutoff``: ``"required"``, ``"optional"``, ``"none"``), its
  parameters (``params``) and their defaults (``defaults``);
* its formula (the kernel's docstring) and ``citation``;
* the ranks it reads (``depth``: its cut-off unless declared otherwise), which the estimators
  and :func:`pbtools.measures.evaluate` both truncate rankings to
  (:func:`pbtools.measures.kernels.depth_needed`);
* whether it reads the relevance set at all (``ranking_only``);
* how topics are averaged (``aggregate``: mean, sum, geometric mean or a string per topic);
* trec_eval's names (``trec``): templates such as ``"P_{cutoff}"`` read on input
  (``P_10``) and written by :attr:`Measure.trec_name`, and whether trec_eval's ``-l`` sets its
  relevance threshold (``trec_level``);
* its kernel: ``kernel(view, topics, gt, measure) -> (values, residuals or None)``.

A new measure is one kernel and one call::

    from pbtools.measures import family

    def success(view, topics, gt, m):
        \"\"\"Success@n = 1 when a relevant document is in the top n, else 0.\"\"\"
        return (view.first_rel_rank(m.rel) <= m.cutoff).astype(float), None

    family("Hit", success, cutoff="required", ranking_only=True)

after which ``"Hit@10"`` works everywhere a measure name does (``evaluate``, the CLI's ``-m``
and its help, the estimators that support every measure). ``docs/extending.md`` runs this.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from pbtools.errors import InputError
from pbtools.measures.params import EXTRA_PARAMS, show_param

__all__ = [
    "MeasureFamily",
    "family",
    "family_of",
    "unregister",
    "register_measure",
    "FAMILIES",
    "describe",
    "COMMON",
]

#: the parameters of most measures: the relevance threshold and the condensed list
COMMON = ("rel", "judged_only")
#: every parameter a family may declare, with its default (``p`` is RBP's, ``beta`` Q's)
DEFAULTS = {"rel": 1, "judged_only": False, "p": 0.8, "beta": 1.0}
DEFAULTS.update({k: d for k, (_, d) in EXTRA_PARAMS.items()})
_CUT_RULES = ("required", "optional", "none")
_AGGREGATES = ("mean", "sum", "geometric", "text")
_FIELD = re.compile(r"\{(\w+)(?::[^}]*)?\}")


@dataclass(frozen=True)
class MeasureFamily:
    """One measure family: its name, parameters, formula, citation, depth, names and kernel.

    Declared by :func:`family` (see the module's docstring for each field).

    Examples
    --------
    >>> from pbtools.measures import parse
    >>> f = family_of("P")
    >>> f.cutoff, f.params, f.trec_name(parse("P@10")), f.depth_of(parse("P@10"))
    ('required', ('rel', 'judged_only', 'relative'), 'P_10', 10)
    """

    name: str
    kernel: Callable
    cutoff: str = "optional"
    params: tuple = COMMON
    defaults: tuple = ()
    aggregate: str = "mean"
    trec: tuple = ()
    trec_level: bool = True
    aliases: tuple = ()
    at: str | None = None
    default_cutoff: int | None = None
    depth: Callable | None = None
    ranking_only: bool | Callable = False
    citation: str = ""
    formula: str = field(default="", compare=False)

    def default(self, key: str):
        """The default value of parameter ``key`` in this family."""
        return dict(self.defaults).get(key, DEFAULTS.get(key))

    def depth_of(self, m) -> int | None:
        """The ranks measure ``m`` of this family reads: its declared ``depth``, else its
        cut-off (None: the whole ranking)."""
        return self.depth(m) if self.depth is not None else m.cutoff

    def reads_relevance_set(self, m) -> bool:
        """Whether measure ``m``'s kernel reads the relevance set (not ``ranking_only``)."""
        only = self.ranking_only(m) if callable(self.ranking_only) else self.ranking_only
        return not only

    def templates(self) -> list[tuple[str, dict]]:
        """trec_eval's names: ``(template, fixed parameters)`` pairs."""
        return [(t, {}) if isinstance(t, str) else (t[0], dict(t[1])) for t in self.trec]

    def trec_patterns(self) -> list[tuple[re.Pattern, list[str], dict]]:
        """Each trec_eval name as ``(regex, its fields, fixed parameters)``, for parsing."""
        out = []
        for template, fixed in self.templates():
            names = _FIELD.findall(template)
            parts = _FIELD.split(template)  # literal, field, literal, ...
            rx = "".join(
                re.escape(p) if i % 2 == 0 else (r"(\d+)" if p == "cutoff" else r"([\d.]+)")
                for i, p in enumerate(parts)
            )
            out.append((re.compile(rx), names, fixed))
        return out

    def trec_name(self, m) -> str | None:
        """trec_eval's name of ``m``: the first template whose fixed parameters are ``m``'s and
        whose fields are ``m``'s other non-default parameters; None when none is."""
        if m.judged_only or (m.rel != 1 and not self.trec_level):
            return None
        have = dict(m.extra)
        if m.cutoff is not None:
            have["cutoff"] = m.cutoff
        if m.p is not None:
            have["p"] = m.p
        if m.beta is not None and m.beta != self.default("beta"):
            have["beta"] = m.beta
        for template, fixed in self.templates():
            fields = set(_FIELD.findall(template))
            if set(have) == fields | set(fixed) and all(have[k] == v for k, v in fixed.items()):
                return template.format(**have)
        return None

    def usage(self) -> str:
        """How a name of this family is written: ``P@n``, ``AP[@n]``, ``IPrec@recall``."""
        at = {"required": "@n", "optional": "[@n]", "none": ""}[self.cutoff]
        return self.name + (f"@{self.at}" if self.at else at)


#: every measure family, by name, in the order declared
FAMILIES: dict[str, MeasureFamily] = {}

#: scorers of qrels that carry more than labels, by the column that marks them: a sampled pool's
#: ``stratum`` (:mod:`pbtools.measures.sampled` installs its scorer here, as the kernels are
#: installed in :data:`~.kernels.KERNELS`); :func:`pbtools.measures.evaluate` hands such qrels
#: to it
QRELS_SCORERS: dict = {}
_ALIASES: dict[str, str] = {}
_TREC_INPUT: list = []  # every family's trec_eval names, compiled: (regex, fields, fixed, family)


def family(
    name: str,
    kernel: Callable,
    *,
    cutoff: str = "optional",
    params: tuple = COMMON,
    defaults: dict | None = None,
    aggregate: str = "mean",
    trec: tuple = (),
    trec_level: bool = True,
    aliases: tuple = (),
    at: str | None = None,
    default_cutoff: int | None = None,
    depth: Callable | None = None,
    ranking_only: bool | Callable = False,
    citation: str = "",
    formula: str | None = None,
) -> MeasureFamily:
    """Declare a measure family: the one registration of a measure (see the module docstring).

    Parameters
    ----------
    name : str
        The name in measure names (``"P"``: ``P@10``); matched case-insensitively.
    kernel : callable
        ``kernel(view, topics, gt, measure) -> (values, residuals or None)``: per-ranking values
        from the rankings (:class:`~pbtools.measures.kernels.View`), their relevance sets
        (:class:`~pbtools.measures.kernels.Topics`), each ranking's topic ``gt`` and the parsed
        :class:`~pbtools.measures.names.Measure`. Its docstring is the family's formula.
    cutoff : {"optional", "required", "none"}
        Whether the name takes ``@n``.
    params : tuple of str
        Accepted parameters: ``rel``, ``judged_only``, ``p``, ``beta`` and those of
        :data:`~pbtools.measures.params.EXTRA_PARAMS`.
    defaults : dict, optional
        Defaults that differ from the parameters' usual ones (``{"recall": (0, 0.1, ...)}``).
    aggregate : {"mean", "sum", "geometric", "text"}
        How topics are averaged: trec_eval's mean, its sum of counts, its geometric mean, or
        none (a string per topic).
    trec : tuple
        trec_eval's names: templates (``"P_{cutoff}"``, ``"Rprec_mult_{mult:.2f}"``) or
        ``(template, {parameter: value})`` for names that fix parameters
        (``("relative_P_{cutoff}", {"relative": True})``).
    trec_level : bool
        Whether trec_eval's ``-l`` is this family's ``rel`` (False for the gain measures).
    aliases : tuple of str
        Other spellings of ``name``.
    at : str, optional
        The parameter that ``@x`` sets instead of a cut-off (``IPrec@0.1``: ``recall``).
    default_cutoff : int, optional
        The cut-off when an optional one is not given.
    depth : callable, optional
        ``depth(measure) -> int or None``: the ranks a measure reads when that is not its
        cut-off (None: the whole ranking).
    ranking_only : bool or callable
        True when the kernel reads the rankings' labels only, never the relevance set (a
        callable decides per measure).
    citation : str
        Where the formula comes from.
    formula : str, optional
        The per-topic formula, when not the kernel's docstring.

    Returns
    -------
    MeasureFamily

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools import measures
    >>> def hits(view, topics, gt, m):
    ...     '''Hits@n = the relevant documents in the top n.'''
    ...     return view.upto(view.rel(m.rel), m.cutoff), None
    >>> _ = family("Hits", hits, cutoff="required", ranking_only=True)
    >>> runs = pd.DataFrame({"name": "r", "qid": "1", "docno": ["a", "b"], "score": [2., 1.]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "label": [1, 1]})
    >>> measures.evaluate(runs, qrels, ["Hits@5"])["value"].tolist()
    [2.0]
    >>> unregister("Hits")
    """
    if cutoff not in _CUT_RULES:
        raise InputError(f"cutoff must be one of {_CUT_RULES}, got {cutoff!r}")
    if aggregate not in _AGGREGATES:
        raise InputError(f"aggregate must be one of {_AGGREGATES}, got {aggregate!r}")
    bad = sorted(set(params) - set(DEFAULTS))
    if bad:
        raise InputError(f"unknown measure parameter(s) {bad}")
    f = MeasureFamily(
        name,
        kernel,
        cutoff,
        tuple(params),
        tuple(sorted((defaults or {}).items())),
        aggregate,
        tuple(trec),
        trec_level,
        tuple(aliases),
        at,
        default_cutoff,
        depth,
        ranking_only,
        citation,
        (kernel.__doc__ or "").strip() if formula is None else formula,
    )
    for template, fixed in f.templates():
        unknown = set(_FIELD.findall(template)) | set(fixed)
        unknown -= {*params, "cutoff"}
        if unknown:
            raise InputError(f"trec name {template!r} of {name}: unknown fields {sorted(unknown)}")
    unregister(name)
    FAMILIES[name] = f
    for alias in (name, *aliases):
        _ALIASES[alias.lower()] = name
    _TREC_INPUT.extend((rx, fields, fixed, f) for rx, fields, fixed in f.trec_patterns())
    return f


def unregister(name: str) -> None:
    """Remove family ``name`` (and its aliases) if declared."""
    if FAMILIES.pop(name, None) is not None:
        for alias in [a for a, n in _ALIASES.items() if n == name]:
            del _ALIASES[alias]
        _TREC_INPUT[:] = [t for t in _TREC_INPUT if t[3].name != name]


def trec_input(text: str):
    """``(family, parameters)`` of a trec_eval name (``P_10``: P, cutoff "10"), or None."""
    for rx, fields, fixed, f in _TREC_INPUT:
        hit = rx.fullmatch(text)
        if hit:
            return f, {**fixed, **dict(zip(fields, hit.groups(), strict=True))}
    return None


def family_of(name: str) -> MeasureFamily:
    """The family named ``name`` (or one of its aliases, any case).

    Raises :class:`~pbtools.errors.InputError` for an unknown name.

    >>> family_of("map").name, family_of("MRR").name
    ('AP', 'RR')
    """
    f = FAMILIES.get(name)
    if f is None:
        f = FAMILIES.get(_ALIASES.get(str(name).lower(), ""))
    if f is None:
        raise InputError(f"unknown measure {name!r}")
    return f


def find(name: str) -> MeasureFamily | None:
    """The family of a name or alias, None when there is none."""
    return FAMILIES.get(name) or FAMILIES.get(_ALIASES.get(str(name).lower(), ""))


def trec_spellings() -> list[str]:
    """trec_eval's names of every family, fields as ``n`` (a cut-off) or ``x``."""
    out = []
    for f in FAMILIES.values():
        for template, _ in f.templates():
            out.append(_FIELD.sub(_spelled, template))
    return out


def describe(names=None) -> str:
    """One line per family (every one, or those of ``names``): how it is written, its
    parameters' defaults and trec_eval's names; the list ``pbtools evaluate --help`` prints.

    >>> print(describe(["P", "RBP"]))
    P@n              rel=1 judged_only=False relative=False; trec_eval: P_n, relative_P_n
    RBP[@n]          p=0.8 rel=1 judged_only=False graded=False; trec_eval: rbp
    """
    fams = [family_of(n) for n in names] if names is not None else list(FAMILIES.values())
    lines = []
    for f in fams:
        defaults = " ".join(f"{p}={show_param(f.default(p))}" for p in f.params if p != f.at)
        names = [_FIELD.sub(_spelled, t) for t, _ in f.templates()]
        trec = f"; trec_eval: {', '.join(names)}" if names else ""
        lines.append(f"{f.usage():<16s} {defaults}{trec}".rstrip())
    return "\n".join(lines)


def _spelled(field: re.Match) -> str:
    return "n" if field.group(1) == "cutoff" else "x"


def register_measure(
    base: str,
    kernel: Callable,
    *,
    cutoff: str = "optional",
    params: tuple[str, ...] = COMMON,
    summed: bool = False,
    aliases: tuple[str, ...] = (),
) -> None:
    """The earlier spelling of :func:`family` (``summed=True``: ``aggregate="sum"``).

    Examples
    --------
    >>> def hits(view, topics, gt, m):
    ...     return view.upto(view.rel(m.rel), m.cutoff), None
    >>> register_measure("Hits", hits, cutoff="required")
    >>> family_of("Hits").aggregate
    'mean'
    >>> unregister("Hits")
    """
    family(
        base,
        kernel,
        cutoff=cutoff,
        params=params,
        aggregate="sum" if summed else "mean",
        aliases=aliases,
    )
