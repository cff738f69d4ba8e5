"""Tests for pbtools.io: formats, strict errors with file:line, lenient repairs, TREC-2 facts,
Parquet round trips, gz, globs, float32 ties and the adapters."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pbtools import TrecFormatError, TrecFormatWarning, io
from pbtools.frames import is_trec_ordered, judge
from pbtools.io import files

RUN6 = ["1 Q0 d1 1 3.0 r", "1 Q0 d2 2 2.0 r", "2 Q0 d1 1 1.0 r"]


def write(path: Path, lines, gz: bool = False, end: str = "\n") -> Path:
    data = (end.join(lines) + end).encode() if lines else b""
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def strict_error(fn, path, *args, **kw) -> TrecFormatError:
    with pytest.raises(TrecFormatError) as info:
        fn(path, *args, **kw)
    err = info.value
    assert err.file == str(path)
    return err


def lenient(fn, *args, **kw):
    with pytest.warns(TrecFormatWarning):
        return fn(*args, lenient=True, **kw)


# --------------------------------------------------------------------------------------------
# good input
# --------------------------------------------------------------------------------------------


def test_read_run_schema_and_trec_order(tmp_path):
    p = write(
        tmp_path / "input.r", ["1 Q0 a 1 2.0 r", "1 Q0 c 2 2.0 r", "1 Q0 b 9 5 r", "10 Q0 x 1 1 r"]
    )
    df = io.read_run(p)
    assert list(df.columns) == ["name", "qid", "docno", "score", "rank"]
    for c in ("name", "qid", "docno"):
        assert isinstance(df[c].dtype, pd.CategoricalDtype)
        assert df[c].cat.categories.dtype == "str"
    assert df["score"].dtype == np.float64 and df["rank"].dtype == np.int32
    # score desc, ties by docno desc; the file's rank column is ignored
    assert df["docno"].astype(str).tolist() == ["b", "c", "a", "x"]
    assert df["rank"].tolist() == [1, 2, 3, 1]
    assert df["qid"].astype(str).tolist() == ["1", "1", "1", "10"]
    assert is_trec_ordered(df)
    assert "repairs" not in df.attrs


def test_whitespace_tabs_crlf_leading_blanks(tmp_path):
    lines = [" 1\tQ0  d1 \t1  3.0\tr  ", "1 Q0\t\td2 2 2.0 r"]
    a = io.read_run(write(tmp_path / "input.ws", lines, end="\r\n"))
    b = io.read_run(write(tmp_path / "input.plain", ["1 Q0 d1 1 3.0 r", "1 Q0 d2 2 2.0 r"]))
    pd.testing.assert_frame_equal(a, b)


def test_last_line_without_newline(tmp_path):
    p = tmp_path / "input.r"
    p.write_bytes(b"1 Q0 d1 1 2 r")
    assert io.read_run(p)["docno"].astype(str).tolist() == ["d1"]
    p.write_bytes(b"1 Q0 d1 1 2 r\n1 Q0 d2 1 zz r")
    assert strict_error(io.read_run, p).line == 2


def test_ids_stay_strings(tmp_path):
    df = io.read_run(write(tmp_path / "input.r", ["001 Q0 0007 1 1 r", "MB001 Q0 x 1 1 r"]))
    assert sorted(df["qid"].astype(str)) == ["001", "MB001"]
    assert df["docno"].astype(str).tolist()[0] == "0007"


def test_gz_transparent_by_content(tmp_path):
    plain = io.read_run(write(tmp_path / "input.r", RUN6))
    gz = io.read_run(write(tmp_path / "input.r.gz", RUN6, gz=True))
    nosuffix = io.read_run(write(tmp_path / "input.q", RUN6, gz=True))  # gzip, no .gz name
    pd.testing.assert_frame_equal(plain, gz)
    pd.testing.assert_frame_equal(plain, nosuffix)


def test_dirs_globs_lists_and_run_id(tmp_path):
    write(tmp_path / "input.x", ["1 Q0 d1 1 1 tx"])
    write(tmp_path / "input.y.gz", ["1 Q0 d1 1 1 ty"], gz=True)
    write(tmp_path / "README", ["not a run"])
    by_dir = io.read_runs(tmp_path)
    assert by_dir["name"].astype(str).tolist() == ["tx", "ty"]
    by_glob = io.read_runs(str(tmp_path / "input.*"))
    pd.testing.assert_frame_equal(by_dir, by_glob)
    by_list = io.read_runs([tmp_path / "input.y.gz", tmp_path / "input.x"])
    pd.testing.assert_frame_equal(by_dir, by_list)
    by_file = io.read_runs(tmp_path, run_id="file")
    assert by_file["name"].astype(str).tolist() == ["x", "y"]
    with pytest.raises(FileNotFoundError):
        io.read_runs(str(tmp_path / "nothing.*"))
    with pytest.raises(ValueError, match="run_id"):
        io.read_runs(tmp_path, run_id="org")


def test_float32_ties(tmp_path):
    # 0.1000000001 and 0.1000000002 differ as doubles but are one float32
    p = write(tmp_path / "input.r", ["1 Q0 a 1 0.1000000002 r", "1 Q0 b 2 0.1000000001 r"])
    d64 = io.read_run(p)
    assert d64["docno"].astype(str).tolist() == ["a", "b"]
    d32 = io.read_run(p, float32=True)
    assert d32["docno"].astype(str).tolist() == ["b", "a"]  # tie → docno descending
    expected = np.float64(np.float32(0.1000000001))
    assert (d32["score"] == expected).all() and d32["score"].dtype == np.float64


def test_read_qrels(tmp_path):
    p = write(tmp_path / "qrels", ["1 0 d1 1", "1 0 d2 0", "2 0 d1 -1", "2\t0  d9  2"])
    q = io.read_qrels(p)
    assert list(q.columns) == ["qid", "docno", "label"]
    assert q["label"].dtype == np.int16
    assert q["label"].tolist() == [1, 0, -1, 2]
    assert q["docno"].astype(str).tolist() == ["d1", "d2", "d1", "d9"]
    assert isinstance(q["qid"].dtype, pd.CategoricalDtype)


def test_read_orgs(tiny_collection):
    orgs = io.read_orgs(tiny_collection / "desc.xml")
    assert orgs["name"].astype(str).tolist() == ["a", "b"]
    assert orgs["org"].astype(str).tolist() == ["Org A", "Org B"]
    assert isinstance(orgs["org"].dtype, pd.CategoricalDtype)


def test_tiny_collection(tiny_collection):
    c = io.read_collection(tiny_collection)
    assert c.name == "TINY" and c.path == tiny_collection
    assert c.unmapped == [] and len(c.repairs) == 0
    assert c.runs["name"].astype(str).tolist() == ["a"] * 5 + ["b"] * 3
    b = c.runs[c.runs["name"] == "b"]
    assert b["docno"].astype(str).tolist() == ["d1", "d4", "d2"]  # reordered by score
    assert c.files["name"].astype(str).tolist() == ["a", "b"]
    assert [Path(f).name for f in c.files["file"]] == ["input.a", "input.b.gz"]
    assert len(c.qrels) == 5 and c.qrels["label"].min() == -1


def test_toy_collection(toy_dir):
    c = io.read_collection(toy_dir)
    assert sorted(c.runs["name"].cat.categories) == ["A", "B", "C", "D", "E"]
    assert c.unmapped == [] and len(c.orgs) == 5


# --------------------------------------------------------------------------------------------
# strict errors: file, line, problem
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad, line, words",
    [
        ("1 Q0 d9 3 1.0", 3, "5 fields"),
        ("1 Q0 d9 3 1.0 r extra", 3, "7 fields"),
        ("", 3, "blank line"),
        ("   \t ", 3, "blank line"),
        ("1 Q0 d9 3 high r", 3, "non-numeric score 'high'"),
        ("1 Q0 d9 3 nan r", 3, "score 'nan' is NaN"),
        ("1 Q0 d9 third 1.0 r", 3, "non-numeric rank 'third'"),
    ],
)
def test_run_line_errors(tmp_path, bad, line, words):
    lines = RUN6[:2] + [bad] + RUN6[2:]
    err = strict_error(io.read_run, write(tmp_path / "input.r", lines))
    assert err.line == line
    assert words in err.problem
    assert f"input.r:{line}: " in str(err)


def test_error_line_counts_blank_lines_and_is_first(tmp_path):
    lines = ["", "", *RUN6, "1 Q0 d7 1 x r", "1 Q0 d8 1 y r"]
    p = write(tmp_path / "input.r", lines)
    err = strict_error(io.read_run, p, lenient=True)
    assert err.line == 6 and "'x'" in err.problem  # non-numeric: not repairable
    err = strict_error(io.read_run, p)
    assert err.line == 1 and "blank" in err.problem


def test_control_byte_lines_keep_exact_line_numbers(tmp_path):
    # a \x1f byte (the CSV reader's delimiter) is a control byte: refused (strict) at its line,
    # skipped (lenient) with line numbers of later errors unchanged
    lines = ["1 Q0 d\x1f1 1 1 r", "", "1 Q0 d2 1 1 r", "1 Q0 d3 1 oops r"]
    p = write(tmp_path / "input.r", lines)
    err = strict_error(io.read_run, p)
    assert err.line == 1 and "control byte 0x1f" in err.problem
    err = strict_error(io.read_run, p, lenient=True)
    assert err.line == 4 and "'oops'" in err.problem


def test_line_longer_than_the_csv_block_uses_the_fallback_splitter(tmp_path):
    long_doc = "d" * (17 << 20)  # longer than the CSV reader's 16 MiB block
    p = write(tmp_path / "input.r", ["1 Q0 d2 1 2 r", f"1 Q0 {long_doc} 2 1 r", "1 Q0 d3 3 x r"])
    err = strict_error(io.read_run, p)
    assert err.line == 3 and "'x'" in err.problem
    p = write(tmp_path / "input.s", ["1 Q0 d2 1 2 r", f"1 Q0 {long_doc} 2 1 r"])
    assert io.read_run(p)["docno"].astype(str).str.len().max() == len(long_doc)


def test_empty_files(tmp_path):
    for name, lines in (("input.empty", []), ("input.blank", ["", "  "])):
        err = strict_error(io.read_run, write(tmp_path / name, lines))
        assert "empty file" in err.problem and err.line is None
    err = strict_error(io.read_qrels, write(tmp_path / "qrels", []))
    assert "empty file" in err.problem


def test_several_tags_strict(tmp_path):
    p = write(tmp_path / "input.r", ["1 Q0 d1 1 3 r", "1 Q0 d2 2 2 r", "1 Q0 d3 3 1 s"])
    err = strict_error(io.read_run, p)
    assert err.line == 3 and "'s'" in err.problem and "several run tags" in err.problem
    err = strict_error(io.read_runs, p, run_id="file")
    assert err.line == 3


def test_duplicate_in_run_strict(tmp_path):
    p = write(
        tmp_path / "input.r",
        ["1 Q0 d1 1 3 r", "2 Q0 d1 1 3 r", "1 Q0 d2 2 2 r", "1 Q0 d1 3 1 r", "1 Q0 d2 4 1 r"],
    )
    err = strict_error(io.read_run, p)
    assert err.line == 4
    assert "duplicate document 'd1' for topic '1'" in err.problem and "line 1" in err.problem


def test_two_files_one_tag_strict(tmp_path):
    a = write(tmp_path / "input.p1", ["1 Q0 d1 1 1 same"])
    b = write(tmp_path / "input.p2", ["1 Q0 d2 1 1 same"])
    with pytest.raises(TrecFormatError) as info:
        io.read_runs(tmp_path)
    err = info.value
    assert err.file == str(b) and str(a) in err.problem and "'same'" in err.problem
    assert err.line is None
    assert io.read_runs(tmp_path, run_id="file")["name"].nunique() == 2


@pytest.fixture(params=["fast", "stdlib"])
def gunzip_path(request, monkeypatch):
    """Both gzip paths of the readers: python-isal (the ``fast`` extra) and the standard
    library (the chooser's answer when isal is absent)."""
    if request.param == "stdlib":
        monkeypatch.setattr(files, "FAST_GUNZIP", None)
    elif files.FAST_GUNZIP is None:
        pytest.skip("python-isal (the optional 'fast' extra) is not installed")
    return request.param


def corrupt_gz_files(tmp_path) -> list[Path]:
    good = gzip.compress(("\n".join(RUN6) + "\n").encode())
    files_ = {
        "input.t.gz": good[: len(good) // 2],  # truncated
        "input.g.gz": b"\x1f\x8b" + b"garbage, not deflate data" * 3,
        "input.c.gz": good[:-8] + b"\0\0\0\0" + good[-4:],  # wrong CRC
        "input.x.gz": good + b"trailing garbage",
    }
    for name, data in files_.items():
        (tmp_path / name).write_bytes(data)
    return [tmp_path / name for name in files_]


def test_corrupt_gz(tmp_path, gunzip_path):
    paths = corrupt_gz_files(tmp_path)
    for p in paths:
        for mode in (False, True):
            err = strict_error(io.read_run, p, lenient=mode)
            assert "corrupt gzip" in err.problem and err.line is None
    err = strict_error(io.read_qrels, paths[0])
    assert "corrupt gzip" in err.problem


def test_gunzip_paths_agree(tmp_path, monkeypatch):
    """The fast decompressor and the standard library read the same bytes (several members,
    trailing zero padding) and refuse a corrupt file with the same message."""
    text = ("\n".join(RUN6) + "\n").encode()
    members = gzip.compress(text[:20]) + gzip.compress(text[20:]) + b"\0" * 16
    good = write(tmp_path / "input.m.gz", [])
    good.write_bytes(members)
    bad = corrupt_gz_files(tmp_path)
    got = {}
    for path_ in ("fast", "stdlib"):
        if path_ == "stdlib":
            monkeypatch.setattr(files, "FAST_GUNZIP", None)
        elif files.FAST_GUNZIP is None:
            continue
        assert files.read_bytes(good) == text
        got[path_] = [strict_error(files.read_bytes, p).problem for p in bad]
    assert len(set(map(tuple, got.values()))) == 1


def test_invalid_utf8(tmp_path):
    p = tmp_path / "input.r"
    p.write_bytes(b"1 Q0 d1 1 1 r\n1 Q0 d\xff 1 1 r\n")
    err = strict_error(io.read_run, p)
    assert err.line == 2 and "UTF-8" in err.problem


@pytest.mark.parametrize(
    "bad, words",
    [
        ("1 0 d9 1.5", "non-integer relevance label '1.5'"),
        ("1 0 d9 rel", "non-integer relevance label 'rel'"),
        ("1 0 d9 70000", "outside the int16 range"),
        ("1 0 d9", "3 fields"),
        ("1 0 d9 1 extra", "5 fields"),
        ("", "blank line"),
        ("1 0 d1 0", "duplicate judgment of document 'd1' for topic '1' (first at line 1)"),
    ],
)
def test_qrels_errors(tmp_path, bad, words):
    p = write(tmp_path / "qrels", ["1 0 d1 1", "2 0 d1 0", bad, "2 0 d2 1"])
    err = strict_error(io.read_qrels, p)
    assert err.line == 3
    assert words in err.problem
    assert "qrels:3: " in str(err)


def test_malformed_xml(tmp_path):
    p = tmp_path / "desc.xml"
    p.write_text("<set>\n  <runs>\n    <tag>a</tag>\n    <organization>A</runs>\n</set>\n")
    err = strict_error(io.read_orgs, p)
    assert err.line == 4 and "malformed XML" in err.problem
    p.write_text("<set>\n<runs><tag>a</tag></runs>\n</set>\n")
    err = strict_error(io.read_orgs, p)
    assert err.line == 2 and "<organization>" in err.problem
    p.write_text(
        "<set>\n<runs><tag>a</tag><organization>A</organization></runs>\n"
        "<runs><tag>a</tag><organization>B</organization></runs>\n</set>\n"
    )
    err = strict_error(io.read_orgs, p)
    assert err.line == 3 and "listed twice" in err.problem
    orgs = lenient(io.read_orgs, p)
    assert orgs["org"].astype(str).tolist() == ["A"]
    assert orgs.attrs["repairs"]["line"].tolist() == [3]


def test_collection_desc_lacks_tag(tiny_collection):
    desc = tiny_collection / "desc.xml"
    desc.write_text(desc.read_text().replace("<tag>b</tag>", "<tag>bee</tag>"))
    with pytest.raises(TrecFormatError) as info:
        io.read_collection(tiny_collection)
    err = info.value
    assert err.file == str(desc) and "'b'" in err.problem and "lacks" in err.problem
    c = lenient(io.read_collection, tiny_collection)
    assert c.unmapped == ["b"]
    assert set(c.orgs["name"].astype(str)) == {"a", "bee"}
    assert "b" in set(c.runs["name"].astype(str))  # kept in the runs
    rep = c.repairs
    assert rep["file"].tolist() == [str(desc)] and "'b'" in rep["problem"].iloc[0]
    assert rep["line"].isna().all()
    assert c.runs.attrs["repairs"].equals(rep)


def test_collection_malformed_desc(tiny_collection):
    (tiny_collection / "desc.xml").write_text("<set><runs>\n<tag>a</tag>\n</set>")
    with pytest.raises(TrecFormatError) as info:
        io.read_collection(tiny_collection, lenient=True)
    err = info.value
    assert err.line == 3 and err.file.endswith("desc.xml")


# --------------------------------------------------------------------------------------------
# lenient repairs
# --------------------------------------------------------------------------------------------


def test_lenient_short_blank_long_lines(tmp_path):
    p = write(
        tmp_path / "input.r",
        ["1 Q0 d1 1 3 r", "", "1 Q0 d2 2", " ", "1 Q0 d3 3 1 r note", "2 Q0 d1 1 1 r"],
    )
    with pytest.warns(TrecFormatWarning, match="input.r"):
        df = io.read_run(p, lenient=True)
    assert df["docno"].astype(str).tolist() == ["d1", "d3", "d1"]
    rep = df.attrs["repairs"]
    assert list(rep.columns) == ["file", "line", "problem", "action"]
    assert rep["line"].tolist() == [2, 3, 4, 5]
    assert rep["action"].tolist() == ["skipped", "skipped", "skipped", "kept the first 6 fields"]
    assert rep["problem"].tolist()[1] == "4 fields, expected 6"
    assert (rep["file"] == str(p)).all()


def test_lenient_duplicates_highest_score_first_on_ties(tmp_path):
    p = write(
        tmp_path / "input.r",
        [
            "1 Q0 d1 1 1.0 r",  # 1: d1 low
            "1 Q0 d2 2 5.0 r",  # 2: d2
            "1 Q0 d1 3 4.0 r",  # 3: d1 best → kept
            "1 Q0 d2 4 5.0 r",  # 4: d2 equal score, later → dropped
            "1 Q0 d1 5 4.0 r",  # 5: d1 equal to best, later → dropped
            "2 Q0 d1 1 0.5 r",  # 6: other topic, not a duplicate
        ],
    )
    with pytest.warns(TrecFormatWarning, match="3 × duplicate"):
        df = io.read_run(p, lenient=True)
    got = {
        (q, d): s
        for q, d, s in zip(df["qid"].astype(str), df["docno"].astype(str), df["score"], strict=True)
    }
    assert got == {("1", "d2"): 5.0, ("1", "d1"): 4.0, ("2", "d1"): 0.5}
    rep = df.attrs["repairs"]
    assert rep["line"].tolist() == [1, 4, 5]
    assert rep["action"].tolist() == [
        "dropped (lower score)",
        "dropped (equal score, later occurrence)",
        "dropped (equal score, later occurrence)",
    ]
    assert "also at line 3" in rep["problem"].iloc[0]
    assert "also at line 2" in rep["problem"].iloc[1]


def test_lenient_several_tags(tmp_path):
    p = write(tmp_path / "input.f", ["1 Q0 d1 1 3 r", "1 Q0 d2 2 2 s", "1 Q0 d3 3 1 t"])
    df = lenient(io.read_run, p)
    assert df["name"].astype(str).unique().tolist() == ["r"]
    rep = df.attrs["repairs"]
    assert rep["line"].tolist() == [2, 3]
    assert "'s'" in rep["problem"].iloc[0] and rep["action"].iloc[0] == "read as tag 'r'"
    by_file = lenient(io.read_run, p, run_id="file")
    assert by_file["name"].astype(str).unique().tolist() == ["f"]


def test_lenient_two_files_one_tag_merged(tmp_path):
    write(tmp_path / "input.p1", ["1 Q0 d1 1 1 same", "1 Q0 d2 2 0.5 same"])
    p2 = write(tmp_path / "input.p2", ["1 Q0 d2 1 2 same", "1 Q0 d3 2 1 same"])
    df = lenient(io.read_runs, tmp_path)
    assert df["name"].astype(str).unique().tolist() == ["same"]
    assert df["docno"].astype(str).tolist() == ["d2", "d3", "d1"]
    assert df["score"].tolist() == [2.0, 1.0, 1.0]
    rep = df.attrs["repairs"]
    merged = rep[rep["line"].isna()]
    assert merged["file"].tolist() == [str(p2)] and "merged" in merged["action"].iloc[0]
    dup = rep[rep["line"].notna()]
    assert dup["line"].tolist() == [2] and dup["file"].tolist() == [str(tmp_path / "input.p1")]
    assert f"{p2}:line 1" in dup["problem"].iloc[0]


def test_lenient_qrels_duplicates_keep_first(tmp_path):
    p = write(tmp_path / "qrels", ["1 0 d1 1", "1 0 d2 0", "", "1 0 d1 0", "1 0 d3 2 x"])
    q = lenient(io.read_qrels, p)
    assert q["docno"].astype(str).tolist() == ["d1", "d2", "d3"]
    assert q["label"].tolist() == [1, 0, 2]
    rep = q.attrs["repairs"]
    assert rep["line"].tolist() == [3, 4, 5]
    assert rep["action"].tolist() == [
        "skipped",
        "dropped (kept the first)",
        "kept the first 4 fields",
    ]


def test_lenient_empty_file_reported(tmp_path):
    write(tmp_path / "input.a", RUN6)
    e = write(tmp_path / "input.e", [])
    df = lenient(io.read_runs, tmp_path)
    assert df["name"].astype(str).unique().tolist() == ["r"]
    rep = df.attrs["repairs"]
    assert rep["file"].tolist() == [str(e)] and "empty file" in rep["problem"].iloc[0]


def test_repairs_in_attrs_do_not_break_pandas(tmp_path):
    # pandas compares attrs with == when concatenating; a plain DataFrame there raises
    a = lenient(io.read_run, write(tmp_path / "input.a", ["1 Q0 d1 1 1 a", "", "2 Q0 d1 1 1 a"]))
    b = lenient(io.read_run, write(tmp_path / "input.b", ["1 Q0 d1 1 1 b", ""]))
    both = pd.concat([a, b], ignore_index=True)
    assert len(both) == 3
    assert len(pd.concat([a[a["qid"] == "1"], a[a["qid"] != "1"]])) == 2
    assert a[["name", "qid"]].astype(str).shape == (2, 2)
    sliced = a[a["docno"] == "d1"]
    assert sliced.attrs["repairs"] is a.attrs["repairs"]  # shared, not copied
    assert isinstance(a.attrs["repairs"], pd.DataFrame)
    assert a.attrs["repairs"]["line"].tolist() == [2]


def test_lenient_clean_input_has_empty_repairs(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = io.read_run(write(tmp_path / "input.r", RUN6), lenient=True)
    assert len(df.attrs["repairs"]) == 0
    assert list(df.attrs["repairs"].columns) == ["file", "line", "problem", "action"]


# --------------------------------------------------------------------------------------------
# TREC-2
# --------------------------------------------------------------------------------------------


# trec2_tag, trec2_file: read once per session (conftest.py)


def _repairs_of(c, run):
    r = c.repairs
    return r[r["file"].str.endswith(f"input.{run}.gz")]


@pytest.mark.slow
def test_trec2_tag_identity(trec2_tag):
    c = trec2_tag
    assert len(c.files) == 38
    assert c.runs["name"].nunique() == 37
    names = c.files.set_index(c.files["file"].map(lambda f: Path(f).name))["name"]
    assert names["input.prc1.gz"] == names["input.prc2.gz"] == "prceo1"
    assert c.unmapped == ["prceo1"]
    assert "prceo1" in set(c.runs["name"].astype(str))
    merged = c.repairs[c.repairs["action"] == "merged into run 'prceo1'"]
    assert merged["file"].str.endswith("input.prc2.gz").tolist() == [True]
    assert is_trec_ordered(c.runs)


@pytest.mark.slow
def test_trec2_repairs(trec2_file):
    c = trec2_file
    u3 = _repairs_of(c, "UREKA3")
    short = u3[~u3["problem"].str.startswith("duplicate")]
    assert short["line"].tolist() == [13134] and short["action"].tolist() == ["skipped"]
    assert short["problem"].tolist() == ["5 fields, expected 6"]
    city = _repairs_of(c, "citymf")
    assert (city["action"] == "kept the first 6 fields").sum() == 1253
    blank = _repairs_of(c, "rutcomb1")
    assert len(blank) == 25 and (blank["problem"] == "blank line").all()
    # the reference README counts repeated (qid, docno) pairs: citymf 30, UREKA2 8,
    # UREKA3 17 (one of them, topic 113, 1,000 copies), uicah 52; dropped rows are one fewer
    # than the copies of each pair
    expected = {"citymf": (30, 32), "UREKA2": (8, 8), "UREKA3": (17, 16 + 999), "uicah": (52, 52)}
    for run, (pairs, dropped) in expected.items():
        dup = _repairs_of(c, run)
        dup = dup[dup["problem"].str.startswith("duplicate")]
        assert len(dup) == dropped, run
        kept = dup["problem"].str.extract(r"(document '[^']*' for topic '[^']*')")[0]
        assert kept.nunique() == pairs, run
    big = _repairs_of(c, "UREKA3")
    assert big["problem"].str.contains("'AP880212-0001' for topic '113'").sum() == 999
    dirty = {Path(f).name for f in c.repairs["file"]}
    assert dirty == {f"input.{r}.gz" for r in ("UREKA3", "citymf", "rutcomb1", "UREKA2", "uicah")}


@pytest.mark.slow
def test_trec2_file_identity_matches_reference(trec2_file, shared_dir):
    c = trec2_file
    assert c.runs["name"].nunique() == 38 and c.unmapped == []
    assert len(c.orgs) == 38
    assert len(c.runs) == 1_823_790 - 25 - 1 - (32 + 8 + 1015 + 52)
    ref = pd.read_csv(
        shared_dir / "data/trec_eval_reference/trec2_trec_eval.tsv.gz", sep="\t", dtype=str
    )
    ref = ref[ref["qid"] != "all"]
    ref_pairs = set(zip(ref["run"], ref["qid"], strict=True))
    pairs = c.runs[["name", "qid"]].astype(str).drop_duplicates()
    assert set(zip(pairs["name"], pairs["qid"], strict=True)) == ref_pairs
    assert len(ref_pairs) == 1849
    q = c.qrels
    assert len(q) == 62620 and q["qid"].nunique() == 50


@pytest.mark.slow
def test_trec2_every_dropped_line_is_a_repair(trec2_file, trec2_tag):
    # by file: 1,133 lines dropped; by tag, input.prc1 and input.prc2 (one tag) merge and the
    # documents both rank are dropped too: 31,447. Each dropped line is one repair.
    for c, n in ((trec2_file, 1133), (trec2_tag, 31_447)):
        dropped = c.repairs["action"].str.match(r"(skipped|dropped)")
        assert 1_823_790 - len(c.runs) == dropped.sum() == n
        kept_six = (c.repairs["action"] == "kept the first 6 fields").sum()
        other = 2 if c is trec2_tag else 0  # the merge, and prceo1 not in desc.xml
        assert kept_six == 1253 and len(c.repairs) == n + kept_six + other


def test_trec2_strict_fails_at_first_dirty_file(trec2_dir):
    with pytest.raises(TrecFormatError) as info:
        io.read_collection(trec2_dir)
    assert info.value.file.endswith("input.UREKA3.gz") and info.value.line == 13134


# --------------------------------------------------------------------------------------------
# Parquet, TREC writers, adapters
# --------------------------------------------------------------------------------------------


def test_parquet_round_trip_run(tmp_path, tiny_collection):
    c = io.read_collection(tiny_collection)
    runs = c.runs
    runs.attrs["repairs"] = pd.DataFrame(
        {
            "file": pd.array(["x"], dtype="str"),
            "line": pd.array([pd.NA], dtype="Int64"),
            "problem": pd.array(["p"], dtype="str"),
            "action": pd.array(["a"], dtype="str"),
        }
    )
    runs.attrs["source"] = "tiny"
    io.write_parquet(runs, tmp_path / "runs.parquet", metadata={"depth": 100, "tag": "t"})
    back = io.read_parquet(tmp_path / "runs.parquet")
    pd.testing.assert_frame_equal(back, runs)
    assert back.attrs["metadata"] == {"depth": 100, "tag": "t"}
    assert back.attrs["source"] == "tiny"
    pd.testing.assert_frame_equal(back.attrs["repairs"], runs.attrs["repairs"])
    assert back["docno"].cat.categories.equals(runs["docno"].cat.categories)


def test_parquet_round_trip_judged_and_unused_categories(tmp_path, tiny_collection):
    c = io.read_collection(tiny_collection)
    judged = judge(c.runs, c.qrels)
    assert judged["label"].dtype == "Int16" and judged["label"].isna().any()
    sub = judged[judged["qid"] == "2"]  # unused categories remain in the dictionaries
    sub = sub.assign(note=pd.array(["n"] * len(sub), dtype="str"))
    for i, frame in enumerate((judged, sub, c.qrels, c.orgs)):
        io.write_parquet(frame, tmp_path / f"f{i}.parquet")
        back = io.read_parquet(tmp_path / f"f{i}.parquet")
        pd.testing.assert_frame_equal(back, frame)
        for col in frame.columns:
            assert back[col].dtype == frame[col].dtype
    assert io.read_parquet(tmp_path / "f1.parquet")["qid"].cat.categories.tolist() == ["1", "2"]


def test_to_trec_round_trip(tmp_path, tiny_collection):
    runs = io.read_runs(tiny_collection / "Runs")
    runs["score"] = runs["score"] / 3.0  # long doubles must survive the text form
    a = io.read_run(tiny_collection / "Runs" / "input.a")
    a["score"] = a["score"] / 3.0
    for name in ("out.txt", "out.txt.gz"):
        io.to_trec(a, tmp_path / name)
        pd.testing.assert_frame_equal(io.read_run(tmp_path / name), a)
    (tmp_path / "runs").mkdir()
    io.to_trec(runs, tmp_path / "runs")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["input.a", "input.b"]
    pd.testing.assert_frame_equal(io.read_runs(tmp_path / "runs"), runs)
    assert gzip.open(tmp_path / "out.txt.gz", "rt").readline().split()[1] == "Q0"
    qrels = io.read_qrels(tiny_collection / "QRels" / "qrels")
    io.to_trec_qrels(qrels, tmp_path / "qrels.gz")
    pd.testing.assert_frame_equal(io.read_qrels(tmp_path / "qrels.gz"), qrels)


def test_ir_measures_and_ranx_adapters(tiny_collection):
    runs = io.read_runs(tiny_collection / "Runs")
    a = runs[runs["name"] == "a"].reset_index(drop=True)
    irm = io.to_ir_measures(a)
    assert list(irm.columns) == ["name", "query_id", "doc_id", "score"]
    back = io.from_ir_measures(irm.drop(columns="name"), name="a")
    pd.testing.assert_frame_equal(back, io.read_run(tiny_collection / "Runs" / "input.a"))
    qrels = io.read_qrels(tiny_collection / "QRels")
    q_irm = io.to_ir_measures(qrels)
    assert list(q_irm.columns) == ["query_id", "doc_id", "relevance"]
    pd.testing.assert_frame_equal(
        io.from_ir_measures(q_irm), io.read_qrels(tiny_collection / "QRels" / "qrels")
    )
    rx = io.to_ranx(a)
    assert rx["1"] == {"d1": 3.0, "d2": 2.0, "d3": 2.0}
    pd.testing.assert_frame_equal(io.from_ranx(rx, name="a"), back)
    with pytest.raises(ValueError, match="2 runs"):
        io.to_ranx(runs, by_run=False)
    assert sorted(io.to_ranx(runs)) == ["a", "b"]  # several runs: one dict per run


def test_ir_datasets_tuples():
    """ir_datasets' qrels_iter()/scoredocs_iter() namedtuples load through from_ir_datasets."""
    from collections import namedtuple

    TrecQrel = namedtuple("TrecQrel", ["query_id", "doc_id", "relevance", "iteration"])
    ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])
    qrels = io.from_ir_datasets([TrecQrel("1", "d1", 2, "0"), TrecQrel("1", "d2", 0, "0")])
    assert list(qrels.columns) == ["qid", "docno", "label"]
    assert qrels["label"].tolist() == [2, 0]
    run = io.from_ir_datasets([ScoredDoc("1", "d2", 1.0), ScoredDoc("1", "d1", 3.0)], name="bm25")
    assert run["docno"].astype(str).tolist() == ["d1", "d2"] and run["rank"].tolist() == [1, 2]
    assert (run["name"] == "bm25").all()


@pytest.mark.parametrize("threshold", [1, 1 << 40])  # the two halves on threads / one pass
def test_sorted_union_of_many_dictionaries(monkeypatch, threshold):
    """The union of many files' id dictionaries: sorted, each file's lookup exact, whichever
    path (idarrays.PARALLEL_UNION) hashes it."""
    import pyarrow as pa

    from pbtools import idarrays, ids

    monkeypatch.setattr(idarrays, "PARALLEL_UNION", threshold)
    rng = np.random.default_rng(7)
    words = np.array([f"d{i:05d}" for i in rng.permutation(3000)])
    dicts = [pa.array(rng.choice(words, size=n, replace=False)) for n in (5, 400, 1, 900, 37, 250)]
    dtype, lookups = ids.sorted_union(dicts)
    union = sorted(set().union(*(d.to_pylist() for d in dicts)))
    assert dtype.categories.tolist() == union
    for d, lk in zip(dicts, lookups, strict=True):
        assert dtype.categories[lk].tolist() == d.to_pylist()


def test_uniform_blanks_every_short_string():
    """direct.uniform_blanks against its definition — per line, the blank-separated fields
    joined by one space — on every string of up to 7 bytes over space, TAB, LF and a letter."""
    import itertools

    from pbtools.io.direct import uniform_blanks

    def reference(data: bytes) -> bytes:
        lines = data.split(b"\n")
        return b"\n".join(b" ".join(ln.replace(b"\t", b" ").split()) for ln in lines)

    for n in range(8):
        for t in itertools.product([b" ", b"\t", b"\n", b"a"], repeat=n):
            s = b"".join(t)
            assert uniform_blanks(s) == reference(s), s
