"""Snapshots kept beside a run: content-addressed tar archives, and the run's own manifest that
says which archive belongs to which call.

The agent loop (``--snapshots``) archives the sandbox's writable directories after every call
(the private ``/tmp`` and HOME are not part of a snapshot; see ``sandbox/base.py``). Each archive
is stored once, named by its content hash, under ``RUN_DIR/snapshots/``: a call that changes no
file writes an archive identical to the previous one, which costs no disk. The trajectory keeps
a reference ``{"path": "snapshots/<hash>.tar", "sha256": ..., "bytes": ..., "call": j}``
relative to the run directory, so a run folder copied to another machine still finds its
archives. A state over the sandbox's size bound (apparent size: sparse files count in full) is
not archived; its reference says ``refused`` instead.

Trust (issue 26): a trajectory is data, and a reference in it may name any file with its true
hash. So ``run`` also writes a manifest, ``snapshots/manifest/<hash of the trajectory id>.jsonl``,
one line per call: ``{"trajectory", "step", "call", "sha256"}``. ``trusted`` believes a
reference only when the manifest lists exactly that archive for that trajectory, step and call,
the file is a plain file inside ``RUN_DIR/snapshots/`` (reached by ``openat`` descent, no
symlink or hard link), and its bytes hash to it; it then hands out a private copy, so the run
folder cannot change the archive after the check. Anything else says why and is not used
(references from before the manifest, plain absolute paths, are never opened).

Layer: io.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentpost.ingress.hostdir import (
    FILE_FLAGS,
    descend,
    open_regular,
    open_root,
    open_under,
    read_fd,
)
from agentpost.ingress.keys import Bounds, Refused, TooLarge, normalise_key
from agentpost.ingress.tarball import iter_members
from agentpost.sandbox.base import Sandbox

SNAPSHOT_DIR = "snapshots"
MANIFEST_DIR = "manifest"
_CHUNK = 1 << 20
_SHA = re.compile(r"[0-9a-f]{64}")
MAX_ARCHIVE = Bounds(max_bytes=8 << 30)  # bytes of one archive file we copy and hash
MAX_MANIFEST = 64 << 20


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def _manifest_key(traj_id: str) -> str:
    return (
        f"{SNAPSHOT_DIR}/{MANIFEST_DIR}/{hashlib.sha256(traj_id.encode()).hexdigest()[:32]}.jsonl"
    )


def start(snapshot_dir: str | Path, traj_id: str) -> None:
    """A fresh attempt of trajectory ``traj_id``: forget what an earlier attempt recorded."""
    snapshot_dir = Path(snapshot_dir)
    name = _manifest_key(traj_id).split("/")[-1]
    try:
        rfd = open_root(snapshot_dir.parent)
    except FileNotFoundError:
        return
    try:
        with descend(rfd, [snapshot_dir.name, MANIFEST_DIR]) as d:
            os.unlink(name, dir_fd=d)
    except FileNotFoundError:
        pass
    finally:
        os.close(rfd)


def _record(d: int, traj_id: str, step: int | None, call: int, digest: str) -> None:
    """Append one line to the trajectory's manifest below the snapshot dir's fd ``d``."""
    line = json.dumps({"trajectory": traj_id, "step": step, "call": call, "sha256": digest}) + "\n"
    with descend(d, [MANIFEST_DIR], create=True) as m:
        name = _manifest_key(traj_id).split("/")[-1]
        fd = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | FILE_FLAGS, 0o644, dir_fd=m)
        try:
            os.write(fd, line.encode())  # one write: lines of concurrent calls never mix
        finally:
            os.close(fd)


def save(sandbox: Sandbox, snapshot_dir: str | Path, call_index: int, *,
         traj_id: str | None = None, step: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Archive ``sandbox``'s writable dirs into ``snapshot_dir`` (deduplicated by content),
    record it in the run's manifest (with ``traj_id``) and return the reference to store in the
    trajectory; ``path`` is relative to the run directory (the parent of ``snapshot_dir``). A
    state over the sandbox's bound is not archived: ``{"call": j, "refused": why}``.

    The run folder may be shared: ``snapshot_dir`` is reached by descent from the run dir (a
    planted symlink there is ``LinkRefused``, never followed), and every name in it is made
    with ``O_EXCL`` or replaced by ``rename`` (which replaces a link, never writes through it)."""
    snapshot_dir = Path(snapshot_dir)
    snapshot_dir.parent.mkdir(parents=True, exist_ok=True)
    rfd = open_root(snapshot_dir.parent)
    try:
        with descend(rfd, [snapshot_dir.name], create=True, where=str(snapshot_dir)) as d:
            ref = _archive(sandbox, d, call_index)
            if traj_id is not None and "sha256" in ref:
                _record(d, traj_id, step, call_index, ref["sha256"])
    finally:
        os.close(rfd)
    if "path" in ref:
        ref["path"] = f"{snapshot_dir.name}/{ref['path']}"
    return ref


def _archive(sandbox: Sandbox, d: int, call_index: int) -> dict[str, Any]:
    tmp = f".snap-{secrets.token_hex(8)}.tar"
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | FILE_FLAGS, 0o644, dir_fd=d))
    try:
        try:
            sandbox.snapshot(f"/proc/self/fd/{d}/{tmp}")  # the dir we hold, whatever its path
        except Refused as e:  # the agent's own state (a sparse file, say): said, not archived
            return {"call": call_index, "refused": str(e)[:300]}
        fd = open_regular(d, tmp, where=tmp)
        try:
            size, h = os.fstat(fd).st_size, hashlib.sha256()
            while block := os.read(fd, _CHUNK):
                h.update(block)
        finally:
            os.close(fd)
        digest = h.hexdigest()
        name = f"{digest[:32]}.tar"  # the same state: the same name, stored once
        os.replace(tmp, name, src_dir_fd=d, dst_dir_fd=d)  # replaces whatever was planted there
    finally:
        try:
            os.unlink(tmp, dir_fd=d)
        except FileNotFoundError:
            pass
    return {"path": name, "sha256": digest, "bytes": size, "call": call_index}


def ref_call(ref: Any) -> int | None:
    """The call index a reference belongs to: stored in new references, parsed from the file
    name (``...-t<turn>-c<call>.tar``) in old ones."""
    if isinstance(ref, dict):
        call = ref.get("call")
        return call if isinstance(call, int) and not isinstance(call, bool) else None
    if isinstance(ref, str):
        stem = Path(ref).stem
        head, sep, tail = stem.rpartition("-c")
        if sep and tail.isdigit():
            return int(tail)
    return None


def manifest_says(run_dir: str | Path, traj_id: str, step: int, call: int) -> str | None:
    """The archive hash the run's manifest records for (trajectory, step, call), or None when it
    records none, or more than one (an attempt that was not cleared: ambiguous)."""
    try:
        fd = open_under(run_dir, _manifest_key(traj_id))
    except (FileNotFoundError, NotADirectoryError, Refused):
        return None
    try:
        text = read_fd(fd, MAX_MANIFEST, "manifest").decode("utf-8", "replace")
    except TooLarge:
        return None
    finally:
        os.close(fd)
    found: set[str] = set()
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if (isinstance(rec, dict) and rec.get("trajectory") == traj_id and rec.get("step") == step
                and rec.get("call") == call and isinstance(rec.get("sha256"), str)):  # fmt: skip
            found.add(rec["sha256"])
    return found.pop() if len(found) == 1 else None


@dataclass(frozen=True)
class Trusted:
    """``path``: a private copy of the archive, checked (None when not trusted); ``why``: the
    reason it is not trusted (None when it is)."""

    path: Path | None
    why: str | None = None


@contextmanager
def trusted(
    ref: Any, run_dir: str | Path | None, traj_id: str, upto: tuple[int, int]
) -> Iterator[Trusted]:
    """The archive ``ref`` names at call ``upto`` = (step, call) of ``traj_id``, as a private
    checked copy that lives for the ``with`` block, or why it is not believed (module doc)."""
    why, copy = _check(ref, run_dir, traj_id, upto)
    try:
        yield Trusted(copy, why)
    finally:
        if copy is not None:
            shutil.rmtree(copy.parent, ignore_errors=True)


def _check(
    ref: Any, run_dir, traj_id: str, upto: tuple[int, int]
) -> tuple[str | None, Path | None]:
    if isinstance(ref, dict) and "refused" in ref:
        return f"not archived when recorded: {ref['refused']}", None
    if not (isinstance(ref, dict) and isinstance(ref.get("path"), str)
            and isinstance(ref.get("sha256"), str) and _SHA.fullmatch(ref["sha256"])):  # fmt: skip
        return "not a checked reference (written before run manifests, or malformed)", None
    if run_dir is None:
        return "no run folder to read it from", None
    try:
        key = normalise_key(ref["path"], where="snapshot reference")
    except Refused as e:
        return str(e), None
    parts = key.split("/")
    if len(parts) != 2 or parts[0] != SNAPSHOT_DIR or parts[1] == MANIFEST_DIR:
        return f"snapshot reference {key!r} is not a file in the run's {SNAPSHOT_DIR}/", None
    listed = manifest_says(run_dir, traj_id, *upto)
    if listed is None:
        return "the run's manifest lists no archive for this call", None
    if listed != ref["sha256"]:
        return "the run's manifest lists another archive for this call", None
    try:
        fd = open_under(run_dir, key)
    except (FileNotFoundError, NotADirectoryError):
        return "archive missing", None
    except Refused as e:
        return f"archive refused: {e}", None
    try:
        return _private_copy(fd, listed)
    finally:
        os.close(fd)


def _private_copy(fd: int, digest: str) -> tuple[str | None, Path | None]:
    if os.fstat(fd).st_size > MAX_ARCHIVE.max_bytes or not stat.S_ISREG(os.fstat(fd).st_mode):
        return "archive over the size bound", None
    d = Path(tempfile.mkdtemp(prefix="agentpost-snapref-"))
    dest = d / "snapshot.tar"
    h, total = hashlib.sha256(), 0
    with open(dest, "wb") as out:
        while block := os.read(fd, _CHUNK):
            total += len(block)
            if total > MAX_ARCHIVE.max_bytes:  # it grew while we read: not the file we checked
                break
            h.update(block)
            out.write(block)
    if total > MAX_ARCHIVE.max_bytes or h.hexdigest() != digest:
        shutil.rmtree(d, ignore_errors=True)
        return "archive content does not match its hash", None
    return None, dest


def contents(tar_path: str | Path) -> dict[str, str]:
    """``member name → content digest`` of an archive (regular files by content, links by
    target, dirs as "dir"), read without touching the disk (``ingress.tarball.iter_members``,
    bounded); timestamps and owners are ignored, so two states with the same files compare
    equal."""
    out: dict[str, str] = {}
    for name, m, f in iter_members(str(tar_path), bounds=MAX_ARCHIVE):
        if m.isreg():
            h = hashlib.sha256()
            while f is not None and (block := f.read(_CHUNK)):
                h.update(block)
            out[name] = f"{stat.S_IMODE(m.mode) & 0o111:o}:{h.hexdigest()}"
        elif m.issym() or m.islnk():
            out[name] = f"link:{m.linkname}"
        elif m.isdir():
            out[name] = "dir"
    return out
