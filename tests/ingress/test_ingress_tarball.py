"""Snapshot archives packed and unpacked with no host powers (ingress.tarball).

Every attack archive is built here member by member; each must be refused (``Refused``) without
a byte landing outside the destination, while an honest tree (odd names, symlinks, hard links,
modes) round-trips exactly."""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest

from agentpost.ingress.keys import Bounds, LinkRefused, Refused, TooLarge, UnsafeKey
from agentpost.ingress.tarball import extract, pack, read_members, tree_size


def add(tar, name, *, kind="file", target=None, data=b"", mode=0o644):
    ti = tarfile.TarInfo(name)
    ti.mode = mode
    if kind == "dir":
        ti.type, ti.mode = tarfile.DIRTYPE, 0o777
    elif kind == "sym":
        ti.type, ti.linkname = tarfile.SYMTYPE, target
    elif kind == "hard":
        ti.type, ti.linkname = tarfile.LNKTYPE, target
    elif kind == "fifo":
        ti.type = tarfile.FIFOTYPE
    elif kind == "chr":
        ti.type, ti.devmajor, ti.devminor = tarfile.CHRTYPE, 1, 3
    else:
        ti.size = len(data)
    tar.addfile(ti, io.BytesIO(data) if kind == "file" else None)


def archive(path: Path, members) -> Path:
    with tarfile.open(path, "w") as tar:
        for m in members:
            add(tar, *m[:1], **m[1])
    return path


@pytest.fixture()
def box(tmp_path):
    """(outside dir with a canary, fresh destination)"""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.txt").write_text("original")
    dest = tmp_path / "dest"
    dest.mkdir()
    return outside, dest


def _untouched(outside: Path) -> bool:
    return (
        sorted(os.listdir(outside)) == ["canary.txt"]
        and (outside / "canary.txt").read_text() == "original"
    )


def attacks(outside: Path) -> dict[str, list]:
    steps = "abcdefghijklmnop"
    comp = "d" * 245
    cve, path = [("app", {"kind": "dir"})], "app"
    for s in steps:  # the CVE-2025-4517 shape: a realpath that gives up past PATH_MAX
        cve += [
            (f"{path}/{comp}", {"kind": "dir"}),
            (f"{path}/{s}", {"kind": "sym", "target": comp}),
        ]
        path = f"{path}/{comp}"
    link = "app/" + "/".join(steps) + "/" + "l" * 254
    cve += [(link, {"kind": "sym", "target": "/".join([".."] * 40)}),
            ("app/escape", {"kind": "sym", "target": "/".join(steps) + "/" + "l" * 254 + str(outside)}),
            ("app/escape/new.txt", {"data": b"created"})]  # fmt: skip
    return {
        "absolute": [(str(outside / "new.txt"), {"data": b"x"})],
        "dotdot": [("app/../../outside/new.txt", {"data": b"x"})],
        "symlink-then-descend": [
            ("app/l", {"kind": "sym", "target": str(outside)}),
            ("app/l/new.txt", {"data": b"x"}),
        ],  # fmt: skip
        "symlink-plus-hardlink": [
            ("app/l", {"kind": "sym", "target": str(outside)}),
            ("app/h", {"kind": "hard", "target": "app/l/canary.txt"}),
            ("app/h", {"data": b"pwned"}),
        ],  # fmt: skip
        "hardlink-absolute": [
            ("app/h", {"kind": "hard", "target": str(outside / "canary.txt")}),
            ("app/h", {"data": b"pwned"}),
        ],  # fmt: skip
        "symlink-file-then-write": [
            ("app/f", {"kind": "sym", "target": str(outside / "canary.txt")}),
            ("app/f/x", {"data": b"pwned"}),
        ],  # fmt: skip
        "cve-2025-4517": cve,
        "nul-in-name": [("app/a\x00b", {"data": b"x"})],
    }


@pytest.mark.parametrize("name", ["absolute", "dotdot", "symlink-then-descend", "symlink-plus-hardlink",
                                  "hardlink-absolute", "symlink-file-then-write", "cve-2025-4517"])  # fmt: skip
def test_an_attack_archive_is_refused_and_touches_nothing_outside(box, tmp_path, name):
    outside, dest = box
    try:
        tar = archive(tmp_path / "a.tar", attacks(outside)[name])
    except ValueError:  # tarfile itself cannot write the name
        pytest.skip("tarfile refuses to write this member")
    with pytest.raises(Refused):
        extract(str(tar), str(dest), ["/app"])
    assert _untouched(outside)


def test_a_symlink_is_kept_as_a_leaf_and_never_followed(box, tmp_path):
    outside, dest = box
    tar = archive(tmp_path / "a.tar", [("app", {"kind": "dir"}), ("app/l", {"kind": "sym", "target": str(outside)}),
                                       ("app/rel", {"kind": "sym", "target": "../../outside/canary.txt"})])  # fmt: skip
    extract(str(tar), str(dest), ["/app"])
    assert os.readlink(dest / "app" / "l") == str(outside)
    assert os.readlink(dest / "app" / "rel") == "../../outside/canary.txt"
    assert _untouched(outside)


def test_a_hard_link_becomes_a_copy_of_the_earlier_member(box, tmp_path):
    _, dest = box
    tar = archive(tmp_path / "a.tar", [("app/a", {"data": b"one"}), ("app/b", {"kind": "hard", "target": "app/a"}),
                                       ("app/c", {"kind": "hard", "target": "app/nope"})])  # fmt: skip
    with pytest.raises(LinkRefused):
        extract(str(tar), str(dest), ["/app"])
    assert (dest / "app" / "b").read_bytes() == b"one" and os.stat(dest / "app" / "b").st_nlink == 1


def test_devices_are_dropped_fifos_kept_as_nodes_and_setuid_bits_stripped(box, tmp_path):
    _, dest = box
    tar = archive(tmp_path / "a.tar", [("app/null", {"kind": "chr"}), ("app/p", {"kind": "fifo"}),
                                       ("app/su", {"data": b"#!/bin/sh\n", "mode": 0o6755})])  # fmt: skip
    out = extract(str(tar), str(dest), ["/app"])
    assert out.dropped == ["app/null"] and sorted(os.listdir(dest / "app")) == ["p", "su"]
    assert stat.S_ISFIFO(os.lstat(dest / "app" / "p").st_mode)
    assert stat.S_IMODE(os.stat(dest / "app" / "su").st_mode) == 0o755


def test_members_outside_the_allowed_dirs_are_skipped_and_bad_names_refused(box, tmp_path):
    outside, dest = box
    tar = archive(tmp_path / "a.tar", [("tests/x", {"data": b"t"}), ("app/ok", {"data": b"o"})])
    extract(str(tar), str(dest), ["/app"])
    assert os.listdir(dest) == ["app"]
    with pytest.raises(UnsafeKey):
        extract(str(archive(tmp_path / "b.tar", attacks(outside)["dotdot"])), str(dest), None)


@pytest.mark.parametrize("kind", ["sym", "file"])
def test_an_allowed_dir_is_always_a_real_dir_and_skipped_parts_are_not_written(box, tmp_path, kind):
    """A caller uses ``dest/app`` by path after extracting (copies it into a sandbox): a member
    that makes ``app`` itself a link (or a file) is refused, so that path never names a host dir."""
    outside, dest = box
    spec = {"kind": "sym", "target": str(outside)} if kind == "sym" else {"data": b"x"}
    with pytest.raises(LinkRefused):
        extract(str(archive(tmp_path / "a.tar", [("app", spec)])), str(dest), ["/app", "/logs"])
    assert (dest / "app").is_dir() and not (dest / "app").is_symlink() and _untouched(outside)
    tar = archive(tmp_path / "b.tar", [("logs/verifier", {"kind": "sym", "target": str(outside)}),
                                       ("logs/verifier/x", {"data": b"v"}), ("logs/agent.txt", {"data": b"a"})])  # fmt: skip
    extract(str(tar), str(dest), ["/logs"], skip=("/logs/verifier",))
    assert os.listdir(dest / "logs") == ["agent.txt"]


def test_apparent_size_and_member_count_are_bounded(box, tmp_path):
    _, dest = box
    tar = archive(tmp_path / "a.tar", [(f"app/f{i}", {"data": b"x" * 100}) for i in range(10)])
    with pytest.raises(TooLarge):
        extract(str(tar), str(dest), ["/app"], bounds=Bounds(max_bytes=999))
    with pytest.raises(TooLarge):
        extract(str(tar), str(dest), ["/app"], bounds=Bounds(max_entries=5))
    extract(str(tar), str(dest), ["/app"], bounds=Bounds(max_bytes=1000))
    assert len(read_members(str(tar))) == 10
    with pytest.raises(TooLarge):
        read_members(str(tar), bounds=Bounds(max_bytes=999))


def test_a_sparse_member_counts_at_its_apparent_size(box, tmp_path):
    if not shutil.which("tar"):
        pytest.skip("GNU tar not available to build a sparse archive")
    _, dest = box
    src = tmp_path / "src" / "app"
    src.mkdir(parents=True)
    with open(src / "big", "wb") as f:
        f.truncate(8 << 30)  # 8 GiB of holes: a few blocks in the archive
    tar = tmp_path / "sparse.tar"
    subprocess.run(
        ["tar", "--sparse", "-cf", str(tar), "-C", str(tmp_path / "src"), "app"], check=True
    )
    assert tar.stat().st_size < 1 << 20
    with pytest.raises(TooLarge):
        extract(str(tar), str(dest), ["/app"])
    assert not (dest / "app" / "big").exists()


def test_pack_round_trips_an_honest_tree_and_bounds_sparse_files(tmp_path):
    src = tmp_path / "app"
    (src / "sub dir").mkdir(parents=True)
    (src / "sub dir" / "line\nbreak \u2603.txt").write_bytes(b"odd")
    (src / "a").write_bytes(b"aaa")
    os.link(src / "a", src / "a2")
    os.symlink("/etc/passwd", src / "outward")
    os.mkfifo(src / "pipe")
    os.chmod(src / "a", 0o751)
    tar = tmp_path / "snap.tar"
    pack(str(tar), {"/app": str(src)})
    dest = tmp_path / "dest"
    dest.mkdir()
    extract(str(tar), str(dest), ["/app"])
    got = dest / "app"
    assert (got / "sub dir" / "line\nbreak \u2603.txt").read_bytes() == b"odd"
    assert (got / "a2").read_bytes() == b"aaa" and os.readlink(got / "outward") == "/etc/passwd"
    assert stat.S_IMODE(os.stat(got / "a").st_mode) == 0o751
    assert stat.S_ISFIFO(os.lstat(got / "pipe").st_mode)
    with open(src / "hole", "wb") as f:
        f.truncate(50 << 20)
    with pytest.raises(TooLarge):
        pack(str(tmp_path / "big.tar"), {"/app": str(src)}, Bounds(max_bytes=10 << 20))
    assert tree_size({"/app": str(src)}, Bounds()) == 6 + (50 << 20)  # the hard link once
