"""Field readers both task formats share (Harbor ``task.toml``, Terminal-Bench 1 ``task.yaml``):
a positive number, agentpost's own ``[agentpost]`` table, the wrong solutions, an optional path.
Each raises an ``InputError`` naming the file and the field.

Task files the host reads itself (the config, the instruction, the setup script, TB1's
``run-tests.sh``, the solution and wrong-solution scripts) come from a directory written
elsewhere, so they are read through ``ingress`` below the task's root (``read_task_bytes``):
by descent, a symlink on the way or a FIFO refused, bounded. A link there could otherwise put a
host file into the prompt or the sandbox. ``check_host_reads`` checks them all when a task loads.

Layer: io.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentpost.errors import InputError
from agentpost.ingress.hostdir import descend, open_regular, open_root, open_under, read_fd, walk
from agentpost.ingress.keys import Bounds, Refused, TooLarge, relative_key, split_key

TASK_FILE_LIMIT = 64 << 20  # bytes of one task file the host reads (a script, an instruction)
TREE_BYTES = 8 << 30  # apparent bytes of one task tree hashed (a build context, the task dir)
TREE_ENTRIES = 200_000
SETUP_SCRIPT = "agentpost-setup.sh"  # environment/<this>: run in the sandbox before the agent

_NUMBER = (int, float)


def read_text(path: Path) -> str:
    """A task file's text; a file that is not UTF-8, or cannot be read (a FIFO, a directory, no
    permission), is an ``InputError`` naming it (and the first bad byte), not a traceback."""
    from agentpost.trajectory.io import read_regular

    raw = read_regular(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, f"byte {e.start}", "not UTF-8 text") from None


def _open_task_file(path: Path, root: Path) -> int:
    try:
        key = relative_key(str(path), str(root), where=str(path))
        return open_under(root, key, hardlinks=True)
    except Refused as e:
        raise InputError(path, None, f"not read ({e}): the host reads a task's files only inside "
                         "its directory, never through a link") from None  # fmt: skip
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror}") from None


def read_task_bytes(path: Path, root: Path) -> bytes:
    """The bytes of task file ``path`` below task dir ``root`` (module docstring), or an
    ``InputError`` naming it."""
    fd = _open_task_file(path, root)
    try:
        return read_fd(fd, TASK_FILE_LIMIT, str(path))
    except Refused as e:
        raise InputError(path, None, str(e)) from None
    finally:
        os.close(fd)


def read_task_text(path: Path, root: Path) -> str:
    """``read_task_bytes`` as UTF-8 text (``InputError`` naming the first bad byte)."""
    raw = read_task_bytes(path, root)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, f"byte {e.start}", "not UTF-8 text") from None


def tree_digest(directory: Path, root: Path, *, skip: Path | None = None,
                modes: bool = False) -> str:  # fmt: skip
    """sha256 of the tree ``directory`` (task dir ``root`` or below it), read by descent from
    ``root``: per regular file in path order, its relative path, NUL, (``modes``: its exec bits
    in octal), its bytes, NUL; a symlink counts by its target's text (never followed); dirs,
    FIFOs, sockets and devices add nothing; ``skip`` (a file) is left out. Bytes are streamed;
    past ``TREE_BYTES`` (apparent size) or ``TREE_ENTRIES`` it is an ``InputError``, as is a
    link on the way to ``directory``. For a tree without links, the bytes hashed are those of
    the ``rglob`` loops this replaces (image tags and SCVD cache keys stay valid)."""
    try:
        parts = [] if directory == root else split_key(relative_key(str(directory), str(root)))
        skip_key = None
        if skip is not None and str(skip).startswith(str(directory).rstrip("/") + "/"):
            skip_key = relative_key(str(skip), str(directory))
        rfd = open_root(root)
        try:
            with descend(rfd, parts, where=str(directory)) as dfd:
                return _digest(dfd, skip_key, modes)
        finally:
            os.close(rfd)
    except Refused as e:
        raise InputError(directory, None, f"not read ({e}): a task's files are read only inside "
                         "its directory, never through a link") from None  # fmt: skip
    except OSError as e:
        raise InputError(directory, None, f"cannot read: {e.strerror}") from None


def _digest(dfd: int, skip_key: str | None, modes: bool) -> str:
    bounds = Bounds(max_bytes=TREE_BYTES, max_entries=TREE_ENTRIES)
    entries = sorted(walk(dfd, bounds=bounds, skip=()), key=lambda e: e[0].split("/"))
    h, total = hashlib.sha256(), 0
    for key, st in entries:
        if key == skip_key or not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            continue
        name = key.encode("utf-8", "surrogateescape")
        parts = split_key(key)
        with descend(dfd, parts[:-1], where=key) as d:
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(parts[-1], dir_fd=d).encode("utf-8", "surrogateescape")
                h.update(name + b"\0-> " + target + b"\0")
                continue
            fd = open_regular(d, parts[-1], where=key)
        with os.fdopen(fd, "rb") as f:
            total += os.fstat(f.fileno()).st_size
            if total > bounds.max_bytes:
                raise TooLarge(f"{key}: the tree is over {bounds.max_bytes} bytes")
            h.update(name + b"\0")
            if modes:
                h.update(oct(os.fstat(f.fileno()).st_mode & 0o111).encode())
            while block := f.read(1 << 20):
                h.update(block)
            h.update(b"\0")
    return h.hexdigest()


def check_host_reads(root: Path, paths: Iterable[Path | None]) -> None:
    """Each of ``paths`` that exists (or is a link) is a plain file reached below ``root``
    without a link; for a script, so is every file beside it (the scripted policies write the
    script's whole directory into the sandbox). ``InputError`` naming the first that is not."""
    for path in paths:
        if path is None or not (path.exists() or path.is_symlink()):
            continue
        os.close(_open_task_file(path, root))


def check_task_files(task: Any) -> None:
    """``check_host_reads`` on every file of ``task`` (a loaded ``Task``) the host reads after
    loading: the setup script, TB1's runner, each solution and wrong solution with the files
    beside it. The scripts come first, so a linked script dir is refused before it is listed."""
    env = task.environment_dir
    scripts = [task.solution_script, *task.wrong_solutions,
               *(s.solution_script for s in task.steps)]  # fmt: skip
    check_host_reads(task.path, [env / SETUP_SCRIPT if env else None, task.run_tests_script,
                                 *scripts])  # fmt: skip
    check_host_reads(task.path, script_dirs(scripts))


def script_dirs(scripts: Iterable[Path | None]) -> list[Path]:
    """Every file beside each script (the files ``write_and_run`` writes into the sandbox)."""
    out: list[Path] = []
    for s in scripts:
        if s is not None and s.parent.is_dir():
            out += sorted(p for p in s.parent.iterdir() if p.is_symlink() or p.is_file())
    return out


def positive_number(table: dict, key: str, default: float, path: Path, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, _NUMBER) or value <= 0:
        raise InputError(path, where, f"must be a positive number, got {value!r}")
    return float(value)


_SIZE = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


def size_mb(table: dict, key: str, path: Path, where: str) -> int | None:
    """``KEY_mb = 2048`` or Harbor's older ``KEY = "2G"`` (K, M, G, T; binary units, as
    Harbor reads them) in MB; None when neither is set; both, disagreeing, is an error."""
    mb = table.get(f"{key}_mb")
    if mb is not None:
        mb = int(positive_number(table, f"{key}_mb", 1, path, f"{where}.{key}_mb"))
    text = table.get(key)
    if text is None:
        return mb
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT])(?:I?B)?\s*", str(text), re.I)
    if isinstance(text, bool) or not isinstance(text, str) or not m:
        raise InputError(
            path, f"{where}.{key}", f'must be a size like "2G" or "512M", got {text!r}'
        )
    value = int(float(m.group(1)) * _SIZE[m.group(2).upper()])
    if value <= 0:
        raise InputError(path, f"{where}.{key}", f"must be a positive size, got {text!r}")
    if mb is not None and mb != value:
        raise InputError(path, f"{where}.{key}", f"{text!r} disagrees with {key}_mb = {mb}")
    return value


def agentpost_table(table: dict[str, Any], path: Path, where: str) -> dict[str, Any]:
    explore = table.get("explore", [])
    if not isinstance(explore, list) or not all(isinstance(c, str) for c in explore):
        raise InputError(path, f"{where}.explore", "must be a list of strings")
    check = table.get("check")
    if check is not None and not isinstance(check, str):
        raise InputError(path, f"{where}.check", "must be a string")
    workdir = table.get("workdir", "/app")
    if not isinstance(workdir, str) or not workdir.startswith("/"):
        raise InputError(path, f"{where}.workdir", "must be an absolute sandbox path")
    if not isinstance(table.get("writable_root", False), bool):
        raise InputError(path, f"{where}.writable_root", "must be true or false")
    return table


def wrong_solutions(root: Path) -> tuple[Path, ...]:
    wrong = root / "wrong"
    if not wrong.is_dir():
        return ()
    found = [wrong / "solve.sh"] if (wrong / "solve.sh").is_file() else []
    found += sorted(p / "solve.sh" for p in wrong.iterdir() if (p / "solve.sh").is_file())
    return tuple(found)


def maybe(path: Path) -> Path | None:
    """``path`` when it exists, else None."""
    return path if path.exists() else None
