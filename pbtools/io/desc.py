"""A safe parser of TREC ``desc.xml`` (run tag → organization); the API is
:func:`pbtools.io.read_orgs`.

``desc.xml`` is untrusted input, so the parser (expat) refuses every entity declaration in a DTD
(a "billion laughs" document expands without bound; an external ``SYSTEM`` entity reads another
file or silently expands to nothing), unparsed entities, references to entities it cannot see and
external entity references. A DTD without entity declarations, and the five predefined entities
(``&amp;`` …), are fine. Each entry's ``<tag>`` and ``<organization>`` must be plain text:
empty or whitespace-only values, nested markup, a tag with whitespace in it and an entry with
two tags or two organizations are refused, naming the file and line, in both modes; a tag listed
twice is refused (strict) or keeps its first entry (lenient, reported).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from xml.parsers import expat

import pandas as pd

from pbtools.frames import TrecFormatError
from pbtools.io.files import read_bytes
from pbtools.io.limits import xml_limit
from pbtools.io.repairs import RepairableError, Repairs

_ENTITY_REFUSED = (
    "desc.xml files with entity declarations are refused: they can expand without bound "
    "(billion laughs) or read other files"
)


class _Node:
    """An open element: its name and line; its text (kept for ``<tag>`` and ``<organization>``
    only); its children's names in order, with the ``<tag>`` / ``<organization>`` children
    themselves (any other child is reduced to its name); whether it holds markup."""

    __slots__ = ("name", "line", "text", "kids", "markup")

    def __init__(self, name: str, line: int):
        self.name, self.line = name, line
        self.text: list[str] | None = [] if name in _FIELDS else None
        self.kids: dict[str, list] = {}
        self.markup = False


_FIELDS = ("tag", "organization")


def parse_desc(path, lenient: bool) -> tuple[list[str], list[str], pd.DataFrame]:
    """Parse desc.xml into run names, organizations (file order) and a repairs frame.

    One pass, in time and memory linear in the file: each entry is checked and kept as two
    strings when its element ends; no tree of the document is built. The file may be at most
    :func:`~pbtools.io.limits.xml_limit` bytes (plain or gunzipped), else it is refused.
    """
    path = str(path)
    data = read_bytes(path, limit=xml_limit(), what="desc.xml")
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.buffer_text = True  # one call per run of text, not per line
    stack: list[_Node] = []
    repairs = Repairs()
    seen: dict[str, int] = {}
    names: list[str] = []
    orgs: list[str] = []

    def here() -> int:
        return parser.CurrentLineNumber

    def entity_decl(name, is_param, value, base, system_id, public_id, notation):
        kind = "parameter entity" if is_param else "entity"
        ext = f" (external: SYSTEM {system_id!r})" if system_id else ""
        raise TrecFormatError(f"{kind} declaration {name!r}{ext}; {_ENTITY_REFUSED}", path, here())

    def unparsed_decl(name, base, system_id, public_id, notation):
        raise TrecFormatError(
            f"unparsed entity declaration {name!r}; {_ENTITY_REFUSED}", path, here()
        )

    def skipped(name, is_param):
        raise TrecFormatError(
            f"reference to entity {name!r} that is not declared in the document "
            "(external DTDs are not read)",
            path,
            here(),
        )

    def external_ref(context, base, system_id, public_id):
        raise TrecFormatError(f"external entity reference {system_id!r} refused", path, here())

    def start(tag, attrs):
        if stack:
            stack[-1].markup = True
        stack.append(_Node(tag, here()))

    def end(tag):
        node = stack.pop()
        entry = "tag" in node.kids or "organization" in node.kids
        if stack:
            kids = stack[-1].kids.setdefault(tag, [])
            if tag in _FIELDS and not entry:
                kids.append(node)
        if entry:
            add_entry(node)

    def add_entry(node: _Node) -> None:
        tag = _value(node, "tag", path)
        org = _value(node, "organization", path)
        if len(tag.split(maxsplit=1)) > 1:  # (stripped) whitespace inside
            raise TrecFormatError(
                f"run tag {tag!r} contains whitespace (a run file's column 6 cannot)",
                path,
                node.kids["tag"][0].line,
            )
        line = node.line
        if tag in seen:
            problem = f"run tag {tag!r} listed twice (first at line {seen[tag]})"
            if not lenient:
                raise RepairableError(problem, path, line)
            repairs.add(path, [line], problem, "dropped (kept the first)")
            return
        seen[tag] = line
        names.append(tag)
        orgs.append(org)

    def chars(text):
        if stack and stack[-1].text is not None:
            stack[-1].text.append(text)

    parser.EntityDeclHandler = entity_decl
    parser.UnparsedEntityDeclHandler = unparsed_decl
    parser.SkippedEntityHandler = skipped
    parser.ExternalEntityRefHandler = external_ref
    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise TrecFormatError(
            f"malformed XML: {expat.errors.messages[e.code]}", path, e.lineno
        ) from None
    return names, orgs, repairs.frame()


def _value(entry: _Node, field: str, path: str) -> str:
    """The plain-text value of an entry's ``<tag>`` or ``<organization>`` (refusals: missing,
    repeated, empty or whitespace-only, nested markup)."""
    nodes = entry.kids.get(field, [])
    if not nodes:
        raise TrecFormatError(f"desc.xml entry lacks its <{field}>", path, entry.line)
    if len(nodes) > 1:
        raise TrecFormatError(
            f"desc.xml entry has {len(nodes)} <{field}> elements (first at line {nodes[0].line})",
            path,
            nodes[1].line,
        )
    node = nodes[0]
    if node.markup:
        inner = ", ".join(f"<{k}>" for k in node.kids)
        raise TrecFormatError(
            f"<{field}> contains markup ({inner}); expected plain text", path, node.line
        )
    text = "".join(node.text).strip()
    if not text:
        raise TrecFormatError(f"empty <{field}> (no text, or only whitespace)", path, node.line)
    return text


# --------------------------------------------------------------------------------------------
# a track without organizations
# --------------------------------------------------------------------------------------------


class OrganizationsWarning(UserWarning):
    """A collection read without organizations (no ``desc.xml``, an empty one, one that lists
    no run): each run is its own organization, so leaving out an organization is leaving out
    a run. Issued once per collection read; the reason is kept in the orgs frame's
    ``attrs["one_org_per_run"]``."""


#: the words every note of a track without organizations ends with
EACH_RUN_ITS_OWN = (
    "each run is its own organization (leave-one-organization-out = leave-one-run-out)"
)


def no_organizations(path, given: bool = True) -> str | None:
    """Why a collection has no organizations, or None when ``desc.xml`` ``path`` has some
    entry to read: ``"no desc.xml given"`` (``given=False``), ``"no desc.xml in DIR"``,
    ``"PATH is empty"``. A ``desc.xml`` that parses to no entry is found by the caller."""
    from pbtools.io.files import path_problem

    if not given:
        return "no desc.xml given"
    if path_problem(path) == "no such file or directory":
        return f"no desc.xml in {Path(path).parent}"
    if path_problem(path) is None and not read_bytes(path).strip():
        return f"{path} is empty"
    return None


def own_organizations(names, reason: str) -> pd.DataFrame:
    """The orgs frame of a collection without organizations: each run of ``names`` its own
    organization, ``reason`` (:func:`no_organizations`) in ``attrs["one_org_per_run"]``, and
    one :class:`OrganizationsWarning` saying so.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     orgs = own_organizations(["a", "b"], "no desc.xml given")
    >>> orgs.astype(str).values.tolist(), orgs.attrs["one_org_per_run"]
    ([['a', 'a'], ['b', 'b']], 'no desc.xml given')
    >>> str(w[0].message).startswith("no desc.xml given: each run is its own organization")
    True
    """
    from pbtools.frames import encode

    tags = pd.Series([str(n) for n in names], dtype="str")
    orgs = pd.DataFrame({"name": encode(tags), "org": encode(tags)})
    orgs.attrs["one_org_per_run"] = reason
    warnings.warn(f"{reason}: {EACH_RUN_ITS_OWN}", OrganizationsWarning, stacklevel=3)
    return orgs
