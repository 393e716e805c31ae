"""Host dirs by descent: nothing named by data is followed out of its root (ingress.hostdir)."""

from __future__ import annotations

import os

import pytest

from agentpost.ingress.hostdir import HeldFile, OpenDir, open_under, read_tree, write_tree
from agentpost.ingress.keys import Bounds, LinkRefused, TooLarge, UnsafeKey


@pytest.fixture()
def outside(tmp_path):
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret").write_text("host secret")
    return d


def test_write_tree_writes_odd_names_inside_and_refuses_escapes(tmp_path, outside):
    root = tmp_path / "root"
    root.mkdir()
    write_tree(root, {"a b/c\nd.txt": "x", "r\u00e9sum\u00e9": b"\xff", "./e//f": "y"})
    assert (root / "a b" / "c\nd.txt").read_text() == "x" and (
        root / "r\u00e9sum\u00e9"
    ).read_bytes() == b"\xff"
    assert (root / "e" / "f").read_text() == "y"
    for files in ({str(outside / "new"): "x"}, {"../outside/new": "x"}, {"a": "1", "a/b": "2"},
                  {"a/b": "1", "a": "2"}, {"x": "1", "./x": "2"}):  # fmt: skip
        fresh = tmp_path / f"r{len(os.listdir(tmp_path))}"
        fresh.mkdir()
        with pytest.raises(UnsafeKey):
            write_tree(fresh, files)
    assert sorted(os.listdir(outside)) == ["secret"]
    with pytest.raises(TooLarge):
        write_tree(tmp_path / "root", {"big": "x" * 11}, bounds=Bounds(max_bytes=10))


def test_write_tree_does_not_follow_a_planted_symlink(tmp_path, outside):
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside, root / "l")
    with pytest.raises(UnsafeKey):
        write_tree(root, {"l/new": "x"})
    assert sorted(os.listdir(outside)) == ["secret"]


def test_read_tree_refuses_links_devices_fifos_and_hard_links(tmp_path, outside):
    root = tmp_path / "saved"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "ok.py").write_text("print(1)")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert read_tree(root) == {"sub/ok.py": b"print(1)"}
    for name, make in (("l", lambda p: os.symlink(outside / "secret", p)),
                       ("p", os.mkfifo),
                       ("h", lambda p: os.link(outside / "secret", p))):  # fmt: skip
        make(root / name)
        with pytest.raises(LinkRefused):
            read_tree(root)
        os.unlink(root / name)
    os.link(outside / "secret", root / "h")
    assert read_tree(root, hardlinks=True)["h"] == b"host secret"  # a sandbox's own hard links
    os.unlink(root / "h")
    link_root = tmp_path / "linked"
    os.symlink(root, link_root)
    with pytest.raises(LinkRefused):
        read_tree(link_root)
    with open(root / "hole", "wb") as f:
        f.truncate(1 << 30)
    with pytest.raises(TooLarge):
        read_tree(root, bounds=Bounds(max_bytes=1 << 20))


def test_open_under_reaches_only_plain_files_inside_the_root(tmp_path, outside):
    run = tmp_path / "run"
    (run / "snapshots").mkdir(parents=True)
    (run / "snapshots" / "a.tar").write_bytes(b"tar")
    fd = open_under(run, "snapshots/a.tar")
    assert os.read(fd, 10) == b"tar"
    os.close(fd)
    os.symlink(outside / "secret", run / "snapshots" / "b.tar")
    os.symlink(outside, run / "elsewhere")
    for key, err in (("snapshots/b.tar", LinkRefused), ("elsewhere/secret", LinkRefused),
                     ("../outside/secret", UnsafeKey), (str(outside / "secret"), UnsafeKey),
                     ("snapshots/missing.tar", FileNotFoundError)):  # fmt: skip
        with pytest.raises(err):
            open_under(run, key)


def test_a_held_file_is_reread_by_descent_from_its_folder(tmp_path, outside):
    """A ``HeldFile`` (what a run folder's walk found) reads through the folder's fd it was
    found in: renaming the folder itself changes nothing, a folder or the file swapped for a
    link (or a hard link, a FIFO) after the walk is ``LinkRefused``, never followed."""
    run = tmp_path / "run"
    (run / "sub").mkdir(parents=True)
    (run / "sub" / "t.jsonl").write_text("mine\n")
    f = HeldFile(OpenDir(run), "sub/t.jsonl", 5)
    assert str(f) == f"{run}/sub/t.jsonl" and not hasattr(f, "__fspath__")
    os.rename(run, tmp_path / "moved")  # the fd holds the folder, not its name
    os.symlink(outside, run)
    assert f.read(100) == b"mine\n" and f.stat().st_size == 5
    moved = tmp_path / "moved"
    for plant in ("dir-link", "file-link", "hard-link", "fifo"):
        os.rename(moved / "sub", moved / "old")
        if plant == "dir-link":
            os.symlink(outside, moved / "sub")
        else:
            (moved / "sub").mkdir()
            target = moved / "sub" / "t.jsonl"
            if plant == "file-link":
                os.symlink(outside / "secret", target)
            elif plant == "hard-link":
                os.link(outside / "secret", target)
            else:
                os.mkfifo(target)
        with pytest.raises(LinkRefused):
            f.read(100)
        if plant == "dir-link":
            os.unlink(moved / "sub")
        else:
            for p in (moved / "sub").iterdir():
                p.unlink()
            (moved / "sub").rmdir()
        os.rename(moved / "old", moved / "sub")
    with pytest.raises(TooLarge):
        f.read(3)
