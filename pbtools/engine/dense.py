"""Dense, integer, per-topic-local layout of runs and qrels variants (the experiments' hot path).

Every correction needs the top of each ranking plus membership tests against whole runs, and
every leave-out experiment needs many relevance sets over the same documents, so runs and qrels
are encoded once into dense arrays over a *per-topic local* document universe (the documents that
any encoded run retrieved, or the qrels judged, for that topic):

``D[r, t, i]``    local doc id of run slot r's (i+1)-th document on topic t (−1 padding), shape
                  runs × topics × L (L = longest ranking);
``RK[r, t, x + 1]`` 1-based rank of local doc x in run r on topic t (0 when absent or x = −1),
                  shape runs × topics × (U + 1) (U = largest per-topic universe; int16 when
                  L < 2¹⁵). When that table
                  would exceed :data:`RANK_TABLE_BYTES` a sorted-key lookup replaces it;
``LAB[v, t, x]``  label of x under qrels variant v (int16; −1 unjudged: absent or negative,
                  PROTOCOL-lipani2015 item 3), with ``present[v, t]``: the variant has lines for
                  topic t (:func:`pbtools.measures.topics.topic_mask` needs it).

Who pooled what is :meth:`DenseRuns.top_counts` (how many runs of a set have x in their top d).
Scores are never computed here: :mod:`pbtools.engine.problem` feeds these arrays to the one
scoring engine, :func:`pbtools.measures.kernels.score`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.engine.dictionaries import (
    code_map,
    map_codes,
    pooled_rows,
    slot_maps,
    slot_rows,
    union_codes,
    union_index,
)
from pbtools.engine.histograms import group_owners, label_histograms, variant_histograms
from pbtools.engine.ranges import CHUNK, expand_ranges, row_chunks
from pbtools.frames import encode, mapped_codes

__all__ = [
    "CHUNK",
    "RANK_TABLE_BYTES",
    "DenseRuns",
    "pooled_rows",
    "row_chunks",
    "expand_ranges",
    "label_histograms",
    "variant_histograms",
]

#: above this many bytes the dense rank table is replaced by a sorted-key lookup
RANK_TABLE_BYTES = 1_500_000_000
#: the universe from a presence table of the (topic, document) keys while it has at most
#: 8 × (entries + qrels lines) + this many cells, else from a sort of the keys
PRESENCE_SLACK = 1 << 22


def _lengths(D: np.ndarray) -> np.ndarray:
    """The longest rank of each ranking of ``D`` (runs × topics × L): one past its last
    filled cell."""
    filled = D[:, :, ::-1] >= 0
    last = D.shape[2] - np.argmax(filled, axis=2)
    return np.where(filled.any(axis=2), last, 0).astype(np.int32)


def _find(keys: np.ndarray, order: np.ndarray | None, wanted: np.ndarray) -> np.ndarray:
    """Positions in ``keys`` (distinct; sorted by ``order``, or sorted when None) of
    ``wanted``; −1 where absent."""
    srt = keys if order is None else keys[order]
    if not len(srt):
        return np.full(len(wanted), -1, dtype=np.int64)
    pc = np.minimum(np.searchsorted(srt, wanted), len(srt) - 1)
    hit = srt[pc] == wanted
    pc = pc if order is None else order[pc]
    return np.where(hit, pc, -1).astype(np.int64)


class DenseRuns:
    """Runs (and the documents of qrels) encoded into the dense per-topic layout.

    ``frames``: run frames in trec order (``name``, ``qid``, ``docno``, ``rank``; ids
    dictionary-encoded). Each frame's runs get their own *slots* (a name occurring in two frames
    has two slots); ``slots(i)`` gives frame i's slot numbers and ``names`` their run names.
    ``qrels``: qrels frames whose documents join the universe, so that relevance sets count
    judged documents no encoded run retrieved (R of AP, the ideal ranking of nDCG).
    """

    def __init__(
        self,
        frames: Sequence[pd.DataFrame],
        qrels: Sequence[pd.DataFrame] = (),
        topics: pd.Index | None = None,
    ):
        frames, qrels = list(frames), list(qrels)
        cols = {c: [encode(f[c]) for f in frames] for c in ("name", "qid", "docno")}
        qcols = {c: [encode(q[c]) for q in qrels] for c in ("qid", "docno")}
        qid_sets = [s.cat.categories for s in cols["qid"] + qcols["qid"]]
        if topics is not None:  # topics of runs to be added later (:meth:`extended`)
            qid_sets.append(pd.Index(encode(pd.Series(topics)).cat.categories))
        self.qids = union_index(qid_sets, sort=True)
        self.docs, self._doc_maps = union_codes(cols["docno"] + qcols["docno"])
        T, NG = len(self.qids), max(len(self.docs), 1)
        slot_names, self._slots, locs = slot_maps(cols["name"], 0)
        self.names = pd.Index(slot_names, dtype="str")
        qt = [mapped_codes(s, self.qids) for s in qcols["qid"]]
        qmapped = zip(qcols["docno"], self._doc_maps[len(frames) :], strict=True)
        qg = [map_codes(s, m) for s, (_c, m) in qmapped]
        empty = np.zeros(0, np.int64)
        qkey = np.concatenate([a * NG + b for a, b in zip(qt, qg, strict=True)] or [empty])
        del qt, qg
        qmaps = [code_map(s, self.qids) for s in cols["qid"]]
        n = sum(len(f) for f in frames)

        def entries():
            """Every entry (run slot, topic, document code, rank), a chunk of rows at a time:
            the per-entry arrays never all alive at once (the encoding's peak)."""
            for i, f in enumerate(frames):
                nc, qc = cols["name"][i].cat.codes.to_numpy(), cols["qid"][i].cat.codes.to_numpy()
                dc, rk = cols["docno"][i].cat.codes.to_numpy(), f["rank"].to_numpy()
                dmap, qmap = self._doc_maps[i][1], qmaps[i]
                for sl in row_chunks(len(f), 16):  # 2¹⁸ entries: ~15 MiB of temporaries
                    t = qc[sl].astype(np.int64) if qmap is None else qmap[qc[sl]]
                    g = dc[sl].astype(np.int64) if dmap is None else dmap[dc[sl]]
                    yield locs[i][nc[sl]], t, g, rk[sl].astype(np.int64)

        # the universe: the (topic, document) keys t · NG + g of the entries and the qrels
        longest = 0
        dense_keys = T * NG <= 8 * (n + len(qkey)) + PRESENCE_SLACK
        if dense_keys:  # a presence table: no sort
            seen = np.zeros(T * NG, dtype=bool)
            seen[qkey] = True
            for _r, t, g, rank in entries():
                g += t * NG
                seen[g] = True
                longest = max(longest, int(rank.max()))
            self.universe = np.flatnonzero(seen)
            inv = np.cumsum(seen, dtype=np.int64 if T * NG >= 2**31 else np.int32)
            del seen
        else:
            keys = np.empty(n, np.int64)
            at = 0
            for _r, t, g, rank in entries():
                g += t * NG
                keys[at : at + len(g)] = g
                at += len(g)
                longest = max(longest, int(rank.max()))
            self.universe, inv = np.unique(np.concatenate([keys, qkey]), return_inverse=True)
            del keys
            inv = inv.ravel()[:n]
        del qkey
        self._sorted = None  # the universe is sorted: local ids in key order
        self.tstart = np.searchsorted(self.universe, np.arange(T + 1) * NG)
        R = len(self.names)
        self.T, self.R, self.NG = T, R, NG
        self.U = max(int(np.diff(self.tstart).max()) if T else 0, 1)
        self.L = max(longest, 1)
        self.D = np.full((R, T, self.L), -1, dtype=np.int32)
        rdt = np.int16 if self.L < 2**15 else np.int32
        if R * T * (self.U + 1) * np.dtype(rdt).itemsize <= RANK_TABLE_BYTES:
            # one leading column of zeros: the padding doc −1 reads rank 0 (no masking pass)
            self.RK, self._keys = np.zeros((R, T, self.U + 1), dtype=rdt), None
        else:  # sorted (r, t, x) keys → rank
            self.RK = None
            keys, vals = np.empty(n, np.int64), np.empty(n, np.int64)
        at = 0
        for rt, t, g, rank in entries():  # each entry's local doc into D and the rank lookup
            m = len(rt)
            if dense_keys:
                g += t * NG
                local = inv[g]
                local -= 1  # the local id: the universe's index less its topic's start
            else:
                local = inv[at : at + m].copy()
            local -= self.tstart[t].astype(local.dtype)
            rt *= T  # flat (run, topic) cell r · T + t: scatters into flat views
            rt += t
            cell = rt * self.L
            cell += rank
            cell -= 1
            self.D.reshape(-1)[cell] = local
            if self.RK is not None:
                cell = rt * (self.U + 1)
                cell += local
                cell += 1
                self.RK.reshape(-1)[cell] = rank
            else:
                keys[at : at + m] = rt * self.U + local
                vals[at : at + m] = rank
            at += m
        del inv
        if self.RK is None:
            o = np.argsort(keys)
            self._keys, self._vals = keys[o], vals[o].astype(np.int32)
        self.length = _lengths(self.D)

    def _index_ranks(self, rt: np.ndarray, local: np.ndarray, rank: np.ndarray) -> None:
        """The rank lookup of :meth:`rank` from every entry (flat (run, topic) cell ``rt``,
        local doc, rank): the dense table RK, or sorted keys when it would be too big."""
        R, T = self.R, self.T
        rdt = np.int16 if self.L < 2**15 else np.int32
        if R * T * (self.U + 1) * np.dtype(rdt).itemsize <= RANK_TABLE_BYTES:
            # one leading column of zeros: the padding doc −1 reads rank 0 (no masking pass)
            self.RK = np.zeros((R, T, self.U + 1), dtype=rdt)
            at = rt * (self.U + 1)
            at += local
            at += 1
            self.RK.reshape(-1)[at] = rank
            self._keys = None
        else:  # sorted (r, t, x) keys → rank
            self.RK = None
            k = rt * self.U + local
            o = np.argsort(k)
            self._keys, self._vals = k[o], rank[o].astype(np.int32)

    def extended(self, frames: Sequence[pd.DataFrame]) -> DenseRuns | None:
        """This encoding with the runs of ``frames`` added, each frame's runs with slots of
        their own after this encoding's (``slots(len(self frames) + i)``); ``self`` unchanged.

        What this encoding holds keeps its slots, topics and local ids: a document the added
        runs retrieve that the topic's universe lacks gets the next local id of that topic
        (in the order of its document code), ``L`` grows to the longest added ranking and
        ``U`` to the largest universe. None when the runs answer a topic this encoding does
        not have (topic numbers would move: build an encoding with them, ``topics=``).

        Examples
        --------
        >>> run = pd.DataFrame({"name": "p", "qid": "1", "docno": ["x", "y"], "rank": [1, 2]})
        >>> enc = DenseRuns([run])
        >>> new = pd.DataFrame({"name": "u", "qid": "1", "docno": ["z", "x", "w"],
        ...                     "rank": [1, 2, 3]})
        >>> ext = enc.extended([new])
        >>> ext.slots(1).tolist(), ext.D[1, 0].tolist(), ext.rank(0, 0, [0, 2, 3]).tolist()
        ([1], [3, 0, 2], [1, 0, 0])
        >>> enc.extended([new.assign(qid="2")]) is None
        True
        """
        frames = list(frames)
        cols = {c: [encode(f[c]) for f in frames] for c in ("name", "qid", "docno")}
        ts = [mapped_codes(s, self.qids) for s in cols["qid"]]
        if any((x < 0).any() for x in ts):
            return None
        out = copy.copy(self)
        T, R0, NG0 = self.T, self.R, self.NG
        out.docs, maps = union_codes(cols["docno"], self.docs, self._doc_maps)
        gcodes = [map_codes(s, m) for s, (_c, m) in zip(cols["docno"], maps, strict=True)]
        out.NG = NG = max(len(out.docs), 1)
        names, slots, r = slot_rows(cols["name"], R0)
        out.names = self.names.append(pd.Index(names, dtype="str"))
        out._slots = [*self._slots, *slots]
        out.R = R = R0 + len(names)
        t = np.concatenate(ts or [r[:0]])
        g = np.concatenate(gcodes or [r[:0]])
        rank = np.concatenate([f["rank"].to_numpy().astype(np.int64) for f in frames] or [r[:0]])
        # the universe in local order, keyed over the grown document dictionary
        uni = self.universe
        if NG != NG0:
            uni = (uni // NG0) * NG + uni % NG0
        key = t * NG + g
        pos = _find(uni, self._order(), key)
        known = pos >= 0
        local = np.where(known, pos - self.tstart[t], 0)
        fresh = np.unique(key[~known])  # (topic, doc) pairs new to the universe, sorted
        ft = fresh // NG
        n_old = np.diff(self.tstart)
        first = np.searchsorted(fresh, np.arange(T) * NG)
        fresh_local = n_old[ft] + np.arange(len(fresh)) - first[ft]
        local[~known] = fresh_local[np.searchsorted(fresh, key[~known])]
        grow = np.concatenate([[0], np.cumsum(np.bincount(ft, minlength=T))])
        out.tstart = self.tstart + grow
        out.universe = np.empty(len(uni) + len(fresh), dtype=np.int64)
        old_t = np.repeat(np.arange(T), n_old)
        out.universe[np.arange(len(uni)) + grow[old_t]] = uni
        out.universe[out.tstart[ft] + fresh_local] = fresh
        out._sorted = False if len(fresh) else self._sorted  # a sorted copy when looked up
        out.U = max(int(np.diff(out.tstart).max()) if T else 0, 1)
        out.L = max(self.L, int(rank.max()) if len(rank) else 0)
        out.D = np.full((R, T, out.L), -1, dtype=np.int32)
        out.D[:R0, :, : self.L] = self.D
        rt = r * T + t
        out.D.reshape(-1)[rt * out.L + (rank - 1)] = local
        out.length = np.concatenate([self.length, _lengths(out.D[R0:])])
        rdt = np.int16 if out.L < 2**15 else np.int32
        if self.RK is not None and self.RK.dtype == rdt:
            if R * T * (out.U + 1) * np.dtype(rdt).itemsize <= RANK_TABLE_BYTES:
                out.RK = np.zeros((R, T, out.U + 1), dtype=rdt)
                out.RK[:R0, :, : self.U + 1] = self.RK
                out.RK.reshape(-1)[rt * (out.U + 1) + (local + 1)] = rank
                return out
        elif self.RK is None:  # sorted keys: the new slots' keys are larger than the old
            old = self._keys
            if out.U != self.U:  # re-keyed over the wider universe, still sorted
                old = (old // self.U) * out.U + old % self.U
            k = rt * out.U + local
            o = np.argsort(k)
            out._keys = np.concatenate([old, k[o]])
            out._vals = np.concatenate([self._vals, rank[o].astype(np.int32)])
            return out
        # the rank table changes form: rebuilt from every entry of D
        rr, tt, ii = np.nonzero(out.D >= 0)
        out._index_ranks(rr * T + tt, out.D[rr, tt, ii].astype(np.int64), ii + 1)
        return out

    def _order(self) -> np.ndarray | None:
        """The order sorting :attr:`universe` (None: it is sorted); computed once."""
        if self._sorted is None:
            return None
        if self._sorted is False:
            self._sorted = np.argsort(self.universe, kind="stable")
        return self._sorted

    def slots(self, frame: int = 0) -> np.ndarray:
        """Slot numbers of frame ``frame``'s runs (in sorted name order)."""
        return self._slots[frame]

    def rank(self, r, t, x) -> np.ndarray:
        """ρ(x, r) on topic t (0 when absent or x < 0); arguments broadcast."""
        x = np.asarray(x)
        if self.RK is not None:  # x = −1 reads the leading zero column (as any x < 0)
            # int64 cells: the index type np.take works in (narrower ones are converted)
            base = (np.asarray(r, np.int64) * self.T + t) * (self.U + 1) + 1
            idx = x + base
            if x.min(initial=0) < -1:
                idx = np.where(x < 0, base - 1, idx)
            got = np.take(self.RK.reshape(-1), idx, mode="clip")
            return got.astype(np.int32, copy=False)
        r, t, x = np.broadcast_arrays(r, t, x)
        k = (r.astype(np.int64) * self.T + t) * self.U + x
        pos = np.searchsorted(self._keys, k)
        pc = np.minimum(pos, len(self._keys) - 1)
        hit = (self._keys[pc] == k) & (x >= 0)
        return np.where(hit, self._vals[pc], 0).astype(np.int32)

    def _doc_codes(self, docno: pd.Series) -> np.ndarray:
        """Codes in :attr:`docs` of an encoded docno column (−1 outside): a dictionary met
        while encoding (the qrels' own) is mapped as then, without a new lookup."""
        cats = docno.cat.categories
        for c, m in self._doc_maps:
            if cats is c:
                raw = docno.cat.codes.to_numpy()
                return raw.astype(np.int64) if m is None else m[raw]
        return mapped_codes(docno, self.docs)

    def locate(self, qid: pd.Series, docno: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """(topic, local doc) of qrels rows; topic −1 for a qid outside the encoding, local doc
        −1 for a document outside the universe."""
        t = mapped_codes(encode(qid), self.qids)
        g = self._doc_codes(encode(docno))
        ok = (t >= 0) & (g >= 0)
        pos = _find(self.universe, self._order(), np.where(ok, t * self.NG + g, -1))
        x = np.where(ok & (pos >= 0), pos - self.tstart[np.maximum(t, 0)], -1)
        return t, x

    def labels(
        self, qrels: pd.DataFrame, key: str | None = None
    ) -> tuple[np.ndarray, np.ndarray, pd.Index]:
        """``(LAB, present, names)`` from qrels: one variant per ``key`` value (or one).

        ``LAB`` (variants × topics × U, int16, −1 unjudged), ``present`` (variants × topics:
        the variant has a line for the topic, whatever its label) and the variant names.
        """
        if key is None or key not in qrels.columns:
            v, names = np.zeros(len(qrels), dtype=np.int64), pd.Index([""], dtype="str")
        else:
            k = encode(qrels[key])
            v, names = k.cat.codes.to_numpy().astype(np.int64), k.cat.categories
        lab = np.full((len(names), self.T, self.U), -1, dtype=np.int16)
        present = np.zeros((len(names), self.T), dtype=bool)
        t, x = self.locate(qrels["qid"], qrels["docno"])
        lv = qrels["label"].to_numpy().astype(np.int64)
        present[v[t >= 0], t[t >= 0]] = True
        m = (x >= 0) & (lv >= 0)
        lab[v[m], t[m], x[m]] = lv[m]
        return lab, present, names

    def top_counts(
        self,
        slots: np.ndarray,
        depth: int,
        groups: np.ndarray | None = None,
        n_groups: int = 1,
    ) -> np.ndarray:
        """Who pooled what: how many of the runs ``slots`` have x in their top ``depth``:
        (groups ×) T × U. ``groups`` (one group id per slot) makes one count table per group."""
        dd = min(int(depth), self.L)
        slots = np.asarray(slots, np.int64)
        gid = np.zeros(len(slots), np.int64) if groups is None else np.asarray(groups, np.int64)
        dt = np.uint8 if len(np.unique(slots)) < 255 else np.int32
        TU1 = self.T * (self.U + 1)
        if n_groups * TU1 > 2 * len(slots) * self.T * dd:  # sparse: count the entries' cells
            docs = self.D[slots, :, :dd]  # slots × T × d
            ok = docs >= 0
            top = np.arange(self.T)[None, :, None]
            flat = ((gid[:, None, None] * self.T + top) * self.U + docs)[ok]
            out = np.zeros(n_groups * self.T * self.U, dtype=dt)
            cells, counts = np.unique(flat, return_counts=True)  # faster than np.add.at
            out[cells] = counts.astype(dt)
            out = out.reshape(n_groups, self.T, self.U)
            return out[0] if groups is None else out
        # dense: np.bincount over (group, topic, 1 + local doc) cells, the padding −1 in a
        # spare column 0 (no mask, no sort)
        flat = gid[:, None, None] * TU1 + (np.arange(self.T) * (self.U + 1) + 1)[None, :, None]
        cnt = np.bincount((flat + self.D[slots, :, :dd]).reshape(-1), minlength=n_groups * TU1)
        out = cnt.reshape(n_groups, self.T, self.U + 1)[:, :, 1:].astype(dt)
        return out[0] if groups is None else out

    def top_owners(
        self, slots: np.ndarray, depth: int, groups: np.ndarray, n_groups: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Who pooled what, by group: per (topic, local doc) the number of groups among whose
        runs ``slots`` x is in a top ``depth`` (T × U), and the only such group where there is
        one (−1 elsewhere); :func:`~pbtools.engine.histograms.group_owners` of their rankings.
        """
        docs = self.D[slots, :, : min(int(depth), self.L)]
        return group_owners(docs, groups, n_groups, self.U)

    def run_rows(self, slots: np.ndarray, topics: np.ndarray | None = None, width=None):
        """Rows (item, topic) and each row's top-``width`` local docs (rows × width, −1 pad).

        ``topics``: items × T mask of the rows wanted (default: every topic the run answers);
        ``width``: None for whole rankings.
        """
        mask = self.length[slots] > 0 if topics is None else topics
        item, t = np.nonzero(mask)
        w = self.L if width is None else max(1, min(int(width), self.L))
        return item, t, self.D[slots[item], t, :w]
