"""Vectorised per-topic kernels behind :mod:`pbtools.measures`.

A *view* is a judged ranking flattened to numpy arrays, sorted by group (one group = one
(keys, run, topic)) and, inside a group, in trec_eval order. Every measure is a sum over the
rows of a group up to a rank cut-off, so each kernel builds one weight per row and sums it per
group with :func:`segment_sums` (``np.add.reduceat`` over ``[start, start + min(n, len))``).
Running counts inside a group (relevant so far, judged non-relevant so far, cumulative gain) are
integer cumulative sums, hence exact; the only floating-point sums are the final per-group
reductions, which start afresh in every group. No Python loop runs over documents or topics.

Relevance convention (``frames``): a label ``>= rel`` is relevant, ``0 <= label < rel`` judged
non-relevant, a missing or negative label unjudged (trec_eval's ``RELVALUE_NONPOOL`` and
``RELVALUE_UNJUDGED``, ``te_form_res_rels.c``). The two kinds of unjudged rows keep distinct codes,
:data:`UNJUDGED` and :data:`POOLED`, both negative: only infAP tells them apart.
"""

from __future__ import annotations

import numpy as np

from pbtools.measures.registry import family_of
from pbtools.measures.relsets import Topics  # (defined here before; kernels.Topics)
from pbtools.measures.segments import segment_sums, starts_of, subtract_gathered
from pbtools.measures.stages import stage

UNJUDGED = -1  # label code of unjudged rows (not in the qrels: trec_eval's RELVALUE_NONPOOL)
PAD = -2  # label code of the cells past the end of a ranking (View.from_matrix)
POOLED = -3  # label code of rows in the qrels with a negative label (RELVALUE_UNJUDGED)


class View:
    """Rows of judged rankings: group id ``g`` (sorted), 1-based rank ``r``, ``label``.

    ``label`` is an integer array with :data:`UNJUDGED` (-1) for unjudged rows. Derived arrays
    (relevance masks, running counts) are cached per relevance threshold.
    """

    def __init__(self, g: np.ndarray, r: np.ndarray, label: np.ndarray, n_groups: int):
        r = np.asarray(r)
        self.g, self.label, self.G = g, label, n_groups
        self.r = r if r.dtype.kind in "iu" else r.astype(np.int64)  # integer ranks kept narrow
        self.start, self.length = starts_of(g, n_groups)
        self._cache: dict = {}

    @classmethod
    def from_matrix(cls, labels: np.ndarray) -> View:
        """Rankings given as a matrix (a :class:`MatrixView`): row i is group i, column j rank
        j + 1, the cell the label of the document there (:data:`UNJUDGED` for an unjudged one,
        :data:`PAD` past the end of the ranking). Each row must be a ranking's prefix."""
        return MatrixView(labels)

    def memo(self, key, make):
        """``make()``, computed once per ``key`` for these rankings (kernels share arrays: the
        interpolated precisions of every recall level, RBP's weights of a persistence)."""
        return self._cache[key] if key in self._cache else self._cache.setdefault(key, make())

    def zeros(self) -> np.ndarray:
        """A float array of zeros shaped like the rows (for per-row weights)."""
        return np.zeros(len(self.g))

    def rows_memo(self, key, fill) -> np.ndarray:
        """A float64 array shaped like the rows, ``fill(out)`` writing every element of it,
        computed once per ``key`` while it is the last one asked for: a :class:`View` keeps
        one such array, a buffer every measure's per-row weights reuse (on 10 M rows each
        fresh 80 MB array is pages the kernel zeroes: ~0.1–0.4 s of system CPU apiece).
        Use it for weights a kernel reduces before it asks for another."""
        held = self._cache.get("rows")
        if held is not None and held[0] == key:
            return held[1]
        buf = held[1] if held is not None else np.empty(len(self.g))
        self._cache["rows"] = (None, buf)  # (while it is being filled)
        fill(buf)
        self._cache["rows"] = (key, buf)
        return buf

    def cum_at(self, x: np.ndarray, at: np.ndarray) -> np.ndarray:
        """``cum(x)[at]``, the inclusive running count of the boolean ``x`` inside each group
        at the rows of the boolean ``at``, from the positions of both alone (no running count
        over every row): the ``x`` rows up to each ``at`` row less those before its group.

        Examples
        --------
        >>> v = View(np.array([0, 0, 0, 1, 1]), np.array([1, 2, 3, 1, 2]),
        ...          np.array([1, 0, 1, 1, 1]), 2)
        >>> rel = v.label > 0
        >>> v.cum_at(rel, rel).tolist(), v.cum(rel)[rel].tolist()
        ([1, 2, 1, 2], [1, 2, 1, 2])
        """
        xi, ai = np.flatnonzero(x), np.flatnonzero(at)
        before = np.searchsorted(xi, self.start[self.g[ai]], side="left")
        return np.searchsorted(xi, ai, side="right") - before

    def unjudged(self) -> np.ndarray:
        """Boolean mask of the retrieved rows that are unjudged."""
        return self.label < 0

    def condensed(self) -> View:
        """The condensed list (Sakai 2008 §3): unjudged rows removed, ranks renumbered."""
        if "condensed" not in self._cache:
            keep = self.label >= 0
            g = self.g[keep]
            start, length = starts_of(g, self.G)
            r = np.arange(len(g), dtype=np.int64) - np.repeat(start, length) + 1
            self._cache["condensed"] = View(g, r, self.label[keep], self.G)
        return self._cache["condensed"]

    def cum(self, x: np.ndarray) -> np.ndarray:
        """Inclusive running sum of the integer array ``x`` inside each group (exact).

        A boolean ``x`` (a count: relevant, judged non-relevant so far) is summed in int32 when
        the rows fit, as no running count can exceed them: half the memory written of int64
        (6.45 M rows: 25 MB a call instead of 50, every page a fresh one)."""
        wide = x.dtype != np.bool_ or len(x) >= 2**31
        dtype = np.int64 if wide else np.int32
        cs = np.cumsum(x, dtype=dtype)
        base = np.zeros(self.G, dtype=dtype)
        ne = self.length > 0
        base[ne] = cs[self.start[ne]] - x[self.start[ne]]
        subtract_gathered(cs, base, self.g)
        return cs

    def upto(self, x: np.ndarray, n: int | None) -> np.ndarray:
        """Per group, the sum of ``x`` over ranks ``<= n`` (every rank when ``n`` is None).

        A boolean ``x`` (a count) is counted from its true rows alone: their groups and places
        in them, kept for the last mask counted (the cut-offs of P@n share them), one
        ``bincount`` of those within the cut-off — no row-sized array (on 10 M rows a running
        count's 40 MB of fresh pages cost more than the count). An integer ``x`` is summed
        exactly as the difference of one running integer sum over all rows (cached per
        array); a float ``x`` is summed afresh in every group (:func:`segment_sums`), as
        trec_eval adds its terms.
        """
        length = self.length if n is None else np.minimum(self.length, n)
        x = np.asarray(x)
        if x.dtype.kind not in "biu":
            return segment_sums(x, self.start, length)
        if n is None:  # whole groups: one integer reduction, no running sum over the rows
            return segment_sums(x, self.start, length, dtype=np.int64)
        if x.dtype == np.bool_:  # a count: its true rows alone, by their place in the group
            hit = self._cache.get("true rows")
            if hit is None or hit[0] is not x:  # one entry: the last mask counted, kept alive
                at = np.flatnonzero(x)
                gi = self.g[at]
                hit = (x, gi, at - self.start[gi])
                self._cache["true rows"] = hit
            _, gi, place = hit
            inside = gi[place < length[gi]]
            return np.bincount(inside, minlength=self.G).astype(np.float64)
        hit = self._cache.get("running")
        if hit is None or hit[0] is not x:  # one entry: the last array summed, kept alive
            running = np.zeros(len(x) + 1, dtype=np.int64)
            np.cumsum(x, dtype=running.dtype, out=running[1:])
            hit = (x, running)
            self._cache["running"] = hit
        running = hit[1]
        return (running[self.start + length] - running[self.start]).astype(np.float64)

    def cumf(self, x: np.ndarray) -> np.ndarray:
        """Inclusive running sum of the float array ``x`` inside each group, added in rank order
        one term at a time as trec_eval does (a cumulative sum along the rows of a
        groups × ranks matrix, so no group's sum carries another's rounding)."""
        width = int(self.length.max()) if len(self.length) else 0
        if self.G * width > 2**26:  # too large a matrix: one running sum, minus each group's base
            cs = np.cumsum(x, dtype=np.float64)
            base = np.zeros(self.G)
            ne = self.length > 0
            base[ne] = cs[self.start[ne]] - x[self.start[ne]]
            subtract_gathered(cs, base, self.g)
            return cs
        cell = self.memo(("cell", width), lambda: self.g.astype(np.int64) * width + self.r - 1)
        mat = np.zeros(self.G * width)
        mat[cell] = x
        return np.cumsum(mat.reshape(self.G, width), axis=1).ravel()[cell]

    def count(self, n: int | None) -> np.ndarray:
        """Per group, ``min(n, len)``: the number of retrieved documents within the cut-off."""
        return (self.length if n is None else np.minimum(self.length, n)).astype(np.float64)

    def rel(self, rel: int) -> np.ndarray:
        """Boolean mask of relevant rows (label >= rel)."""
        key = ("rel", rel)
        if key not in self._cache:
            self._cache[key] = self.label >= rel
        return self._cache[key]

    def nonrel(self, rel: int) -> np.ndarray:
        """Boolean mask of judged non-relevant rows (0 <= label < rel)."""
        key = ("nonrel", rel)
        if key not in self._cache:
            lab = self.label
            self._cache[key] = lab == 0 if rel == 1 else (lab >= 0) & (lab < rel)
        return self._cache[key]

    def gain(self, rel: int) -> np.ndarray:
        """Gain of each row: its label when relevant (label >= rel), else 0 (trec_eval ndcg)."""
        key = ("gain", rel)
        if key not in self._cache:
            self._cache[key] = np.where(self.rel(rel), self.label, 0)
        return self._cache[key]

    def rel_so_far(self, rel: int) -> np.ndarray:
        key = ("crel", rel)
        if key not in self._cache:
            crel = self.cum(self.rel(rel))  # counts within a ranking: int32 is enough
            self._cache[key] = crel.astype(np.int32, copy=False) if len(crel) < 2**31 else crel
        return self._cache[key]

    def first_rel_rank(self, rel: int) -> np.ndarray:
        """Rank of the first relevant row per group (``inf`` when there is none)."""
        key = ("first", rel)
        if key not in self._cache:
            m = self.rel(rel)
            gr, rr = self.g[m], self.r[m]
            first = np.ones(len(gr), dtype=bool)
            first[1:] = gr[1:] != gr[:-1]
            out = np.full(self.G, np.inf)
            out[gr[first]] = rr[first]
            self._cache[key] = out
        return self._cache[key]


class MatrixView(View):
    """The rankings of :class:`View` stored as a dense matrix: rows = groups, columns = ranks.

    The experiments' dense layout (:mod:`pbtools.engine.dense`) produces rankings as label
    matrices; scoring them in place avoids flattening. Every kernel formula is the one of
    :func:`kernel`: only the storage-specific operations (running sums, sums up to a rank, the
    first relevant rank, the condensed list) are implemented along the rows' axis here.
    Cells past the end of a ranking hold :data:`PAD`.

    Narrow signed label dtypes (int8, int16) are kept, and the matrix is stored column-major
    (ranks outermost), so that masks cost one byte per cell and a sum up to a cut-off is a
    vectorised pass over the first columns. Masks and integer weights are summed in integers
    (exact); float weights are summed along each row as a C-ordered array, as numpy sums rows.
    """

    def __init__(self, labels: np.ndarray):
        labels = np.asarray(labels)
        if labels.dtype.kind != "i":  # unsigned or float: no room for PAD, UNJUDGED
            labels = labels.astype(np.int64)
        if labels.ndim != 2:
            labels = labels.reshape(0, 0)
        rows, width = labels.shape
        self.label, self.G = np.asfortranarray(labels), rows
        self.r = np.broadcast_to(np.arange(1, width + 1, dtype=np.int64), labels.shape)
        self.g = np.broadcast_to(np.arange(rows, dtype=np.int64)[:, None], labels.shape)
        self._cache: dict = {}

    @property
    def inside(self) -> np.ndarray:
        """Mask of the cells inside a ranking (not :data:`PAD`)."""
        if "inside" not in self._cache:
            self._cache["inside"] = self.label != PAD
        return self._cache["inside"]

    @property
    def length(self) -> np.ndarray:
        """Length of every ranking (its number of cells inside)."""
        if "length" not in self._cache:
            n = self.inside.sum(axis=1, dtype=np.int32 if self.label.shape[1] < 2**31 else None)
            self._cache["length"] = n.astype(np.int64)
        return self._cache["length"]

    def zeros(self) -> np.ndarray:
        return np.zeros(self.label.shape)

    def unjudged(self) -> np.ndarray:
        return (self.label < 0) & self.inside

    def condensed(self) -> View:
        """The condensed list: unjudged cells removed, each row compacted to the left."""
        if "condensed" not in self._cache:
            keep = self.label >= 0
            order = np.argsort(~keep, axis=1, kind="stable")
            lab = np.take_along_axis(self.label, order, axis=1)
            lab = np.where(np.take_along_axis(keep, order, axis=1), lab, PAD)
            self._cache["condensed"] = MatrixView(lab)
        return self._cache["condensed"]

    def cum(self, x: np.ndarray) -> np.ndarray:
        return np.cumsum(x, axis=1, dtype=np.int64)

    def cum_at(self, x: np.ndarray, at: np.ndarray) -> np.ndarray:
        return self.cum(x)[at]

    def rows_memo(self, key, fill) -> np.ndarray:
        def make():
            out = self.zeros()
            fill(out)
            return out

        return self.memo(("rows", key), make)

    def cumf(self, x: np.ndarray) -> np.ndarray:
        return np.cumsum(np.where(self.inside, x, 0.0), axis=1)

    def upto(self, x: np.ndarray, n: int | None) -> np.ndarray:
        x = np.asarray(x)
        if n is not None and np.ndim(n):  # a cut-off per ranking
            x = np.where(self.r <= np.asarray(n)[:, None], x, np.zeros((), x.dtype))
            n = None
        part = x if n is None else x[:, :n]
        if x.dtype.kind == "b":  # counts: exact in int32 (a row has fewer than 2**31 cells)
            return part.sum(axis=1, dtype=np.int32).astype(np.float64)
        if x.dtype.kind in "iu":  # integer weights: exact in int64
            return part.sum(axis=1, dtype=np.int64).astype(np.float64)
        return np.ascontiguousarray(part).sum(axis=1, dtype=np.float64)

    def first_rel_rank(self, rel: int) -> np.ndarray:
        key = ("first", rel)
        if key not in self._cache:
            m = self.rel(rel)
            hit = m.any(axis=1) if m.size else np.zeros(self.G, bool)
            first = m.argmax(axis=1) + 1.0 if m.size else np.zeros(self.G)
            self._cache[key] = np.where(hit, first, np.inf)
        return self._cache[key]


def score(
    view: View,
    topics: Topics,
    gt: np.ndarray,
    measures,
    residuals: bool = True,
    texts: dict | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-group values of several measures: the one scoring engine of pbtools.

    ``view``: the rankings (one group per ranking), ``topics``: their relevance sets, ``gt``: the
    topic of each group, ``measures``: parsed :class:`~pbtools.measures.names.Measure` objects.
    Returns ``(values, residuals)``, groups × measures (residuals NaN except for RBP; None when
    ``residuals`` is False). A string measure (``Relstring``) has NaN values; its strings go to
    ``texts[j]`` (j: the measure's column) when a ``texts`` dict is given. Every score in
    pbtools — evaluation, truth, reduced pools, merged runs, estimators' inputs — is computed
    here.
    """
    values = np.zeros((view.G, len(measures)))
    resid = np.full((view.G, len(measures)), np.nan) if residuals else None
    gt = np.asarray(gt, dtype=np.int64)
    # a handful of measures, each family's together: the arrays they share (the rows' weights
    # of View.rows_memo, one at a time) are computed once; the values do not depend on order
    for j in sorted(range(len(measures)), key=lambda j: (measures[j].base, measures[j].rel)):
        m = measures[j]
        v = view.condensed() if m.judged_only else view
        val, res = family_of(m.base).kernel(v, topics, gt, m)
        values[:, j] = val
        if res is not None and res.dtype.kind in "US" and texts is not None:
            texts[j] = res
        elif res is not None and resid is not None and res.dtype.kind == "f":
            resid[:, j] = res
        stage(str(m))
    return values, resid


def reads_relevance_set(measures) -> bool:
    """Whether a kernel of ``measures`` reads the relevance set (:class:`Topics`) at all.

    False when every measure's family is declared ``ranking_only`` (for that measure):
    rankings with equal labels then score the same whatever their relevance sets, so
    groupings of equal rankings need not compare the sets.

    Examples
    --------
    >>> from pbtools.measures.names import parse_all
    >>> reads_relevance_set(parse_all(["P@5", "AntiP@10"])), reads_relevance_set(parse_all(["AP"]))
    (False, True)
    >>> reads_relevance_set(parse_all(["P(relative=True)@5"]))  # ÷ min(n, R)
    True
    """
    return any(family_of(m.base).reads_relevance_set(m) for m in measures)


def depth_needed(measures) -> int | None:
    """The ranks the measures read: the largest depth their families declare (a measure's
    cut-off unless its family says otherwise), or None (the whole ranking) when one reads it
    all (no cut-off; a condensed list, which may skip unjudged ranks).

    The estimators score rankings cut to this depth, and so does
    :func:`pbtools.measures.evaluate`: a family declared to read past its cut-off gets the
    same ranks in both.

    Examples
    --------
    >>> from pbtools.measures.names import parse_all
    >>> depth_needed(parse_all(["P@5", "nDCG@20"])), depth_needed(parse_all(["P@5", "AP"]))
    (20, None)
    """
    cut = []
    for m in measures:
        depth = None if m.judged_only else family_of(m.base).depth_of(m)
        if depth is None:
            return None
        cut.append(depth)
    return max(cut) if cut else None
