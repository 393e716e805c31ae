"""One documents room (issue 21 item 2): every format string in ``src/`` is a row of
``documents.formats.FORMATS``, every producer name resolves to real code, the report classifies
files by the table, and ``atomic_write`` is whole-or-nothing and refuses non-regular targets."""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path

import pytest

from agentpost.documents.formats import FORMATS, fmt, kind_of, lookup, producer
from agentpost.documents.write import atomic_write, write_json, write_lines
from agentpost.errors import InputError
from agentpost.report.scan import JSONL_KINDS, KINDS, classify_json

SRC = Path(__file__).resolve().parents[1] / "src" / "agentpost"
FORMAT_RE = re.compile(r"""["'](agentpost\.[a-z][a-z0-9_.-]*/\d+)["']""")
FMT_CALL_RE = re.compile(r"""\bfmt\(\s*"(agentpost\.[a-z][a-z0-9_.-]*)"(?:,\s*(\d+))?\)""")
# a producer written as a literal: {"name": "..."} next to a version, or Producer(name="...")
LITERAL_RE = re.compile(r"""(?:"name":\s*|Producer\(\s*name=)f?"([^"{]+)"[^\n]*\n?[^\n]*version""")


def _sources():
    for p in sorted(SRC.rglob("*")):
        if p.suffix in (".py", ".json", ".jsonl") and p.parts[-2:] != ("documents", "formats.py"):
            yield p


def _formats_in(text: str) -> set[str]:
    """Format strings written out, and those named through ``fmt(name[, version])``."""
    calls = {f"{n}/{v or 1}" for n, v in FMT_CALL_RE.findall(text)}
    return set(FORMAT_RE.findall(text)) | calls


def resolve(name: str) -> object:
    """The module, or the module attribute (``pkg.mod.func`` / ``pkg.mod.Class.method``)."""
    if name.startswith("agentpost.import."):  # importers are named by their table entry
        from agentpost.trajectory.importers import FORMATS as IMPORTERS

        return importlib.import_module(f"agentpost.trajectory.importers.{IMPORTERS[name[17:]]}")
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


def test_every_format_string_in_src_is_a_row_of_the_table() -> None:
    found = set().union(*(_formats_in(p.read_text(errors="replace")) for p in _sources()))
    assert len(found) > 20  # the scan sees the package
    assert sorted(found - set(FORMATS)) == []
    assert sorted(set(FORMATS) - found) == []  # no stale rows either


def test_every_literal_producer_name_resolves_to_code() -> None:
    bad = []
    for p in _sources():
        if p.suffix != ".py" or p.parts[-2] == "documents":
            continue
        for name in LITERAL_RE.findall(p.read_text()):
            try:
                resolve(name)
            except (ImportError, AttributeError, KeyError):
                bad.append(f"{p.relative_to(SRC)}: {name}")
    assert bad == [], bad
    assert resolve("agentpost.import.codex").__name__.endswith("importers.codex")


def test_producer_is_built_from_the_function_and_its_arguments() -> None:
    from agentpost.hero.analyze import analyze

    block = producer(analyze, n_boot=0, inputs=["a.jsonl"])
    assert block["name"] == "agentpost.hero.analyze.analyze"
    assert resolve(block["name"]) is analyze and block["args"] == {
        "n_boot": 0,
        "inputs": ["a.jsonl"],
    }
    assert analyze([], n_boot=0)["producer"]["name"] == block["name"]  # what the writer stamps


def test_the_report_classifies_by_the_table_not_by_substrings() -> None:
    for row in FORMATS.values():
        assert row.kind is None or row.kind in KINDS, row
        doc = {"format": row.id}
        want = None if row.kind in JSONL_KINDS else row.kind
        if want is not None:
            assert classify_json(doc) == want and kind_of(doc) == row.kind
    # a newer version of a known document still classifies by its name
    assert classify_json({"format": "agentpost.efficiency/9"}) == "efficiency"
    # ... but a name that merely contains a known one does not (the old substring match did)
    assert kind_of({"format": "agentpost.lab-efficiency/1"}) is None
    assert lookup("agentpost.scvd.metrics/1").writer.startswith("agentpost diagnose")
    with pytest.raises(KeyError):
        fmt("agentpost.nope")


def test_atomic_write_replaces_whole_and_streams(tmp_path) -> None:
    target = tmp_path / "sub" / "doc.json"
    write_json(target, {"a": 1})
    assert target.read_text() == '{\n  "a": 1\n}\n'
    write_lines(target, [{"x": i} for i in range(3)])
    assert target.read_text().splitlines() == ['{"x": 0}', '{"x": 1}', '{"x": 2}']
    assert atomic_write(target, "é") == target and target.read_bytes() == "é".encode()
    assert sorted(p.name for p in target.parent.iterdir()) == ["doc.json"]  # no temp left


def test_a_failing_write_leaves_the_old_file_and_no_temp(tmp_path) -> None:
    target = tmp_path / "doc.jsonl"
    target.write_text("old\n")

    def chunks():
        yield b"new\n"
        raise RuntimeError("the producer died mid-stream")

    with pytest.raises(RuntimeError):
        atomic_write(target, chunks())
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["doc.jsonl"]


def test_non_regular_targets_are_refused(tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target, why in ((fifo, "not a regular file"), (tmp_path, "Is a directory")):
        with pytest.raises(InputError, match=why):
            atomic_write(target, b"x")
    with pytest.raises(InputError, match="not a regular file"):
        atomic_write("/dev/null", b"x")
    assert fifo.exists() and os.path.exists("/dev/null")
    (tmp_path / "ro").mkdir(mode=0o500)
    if os.geteuid() != 0:  # root writes anywhere
        with pytest.raises(InputError, match="cannot write"):
            atomic_write(tmp_path / "ro" / "x.json", b"x")


def test_a_symlinked_target_is_refused_and_a_link_below_the_root_too(tmp_path) -> None:
    """No output is written through a link, nor over one (docs/threat-model.md, "Run folders
    (writes)"): ``-o link.json`` is an ``InputError`` and both the link and the file it names
    stay; below ``root`` every folder is reached by descent, so a linked folder is refused; the
    folder the user named (``root``) is followed as any path the user types."""
    real = tmp_path / "store" / "doc.json"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "doc.json"
    link.symlink_to(real)
    with pytest.raises(InputError, match="symbolic link"):
        write_json(link, {"a": 2})
    assert link.is_symlink() and real.read_text() == "old\n"
    run = tmp_path / "run"
    (run / "cases").mkdir(parents=True)
    (run / "linked").symlink_to(tmp_path / "store")
    with pytest.raises(InputError, match="linked.*link"):
        write_json(run / "linked" / "x.json", {}, root=run)
    write_json(run / "cases" / "new" / "x.json", {"b": 1}, root=run)  # folders made by descent
    assert (run / "cases" / "new" / "x.json").read_text() == '{\n  "b": 1\n}\n'
    (tmp_path / "run-link").symlink_to(run)
    write_json(tmp_path / "run-link" / "cases" / "y.json", {}, root=tmp_path / "run-link")
    assert sorted(p.name for p in real.parent.iterdir()) == ["doc.json"]  # nothing new there
    assert sorted(p.name for p in (run / "cases").iterdir()) == ["new", "y.json"]


def test_a_folder_that_cannot_be_synced_is_no_traceback(tmp_path, monkeypatch) -> None:
    """After the rename, the folder's fsync: where the filesystem cannot (EINVAL) the write
    stands; an I/O error is an ``InputError`` naming the folder. (``os.fsync`` is made to fail
    only for the folder: no real filesystem here fails on demand.)"""
    import errno

    from agentpost.documents import write as w

    real_fsync = os.fsync

    def failing(code):
        def fsync(fd):
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                raise OSError(code, os.strerror(code))
            return real_fsync(fd)

        return fsync

    target = tmp_path / "doc.json"
    monkeypatch.setattr(w.os, "fsync", failing(errno.EINVAL))
    atomic_write(target, b"one")
    assert target.read_bytes() == b"one"
    monkeypatch.setattr(w.os, "fsync", failing(errno.EIO))
    with pytest.raises(InputError, match="cannot sync it") as e:
        atomic_write(target, b"two")
    assert str(tmp_path) in e.value.one_line() and target.read_bytes() == b"two"
