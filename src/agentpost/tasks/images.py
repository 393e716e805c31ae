"""Task images for the docker backend, built offline from the task's own Dockerfile.

The Dockerfile (Harbor: ``environment/Dockerfile`` in the ``environment/`` context; TB1: the
task root's ``Dockerfile``) is rewritten by ``sandbox.dockerfile``: its ``FROM`` lines onto the
local bases (built on demand), PPAs dropped, and a last step (``sandbox.provision``) that serves
offline what the task's solution and tests install at run time (apt, pip, uv, npm), read from
every text file of its ``solution/`` and ``tests/`` (each step's too; TB1: ``solution.sh``,
``run-tests.sh``, ``tests/``) and the task's wrong solutions. The build context is a copy of the
task's with ``.agentpost-provision/`` (the in-image helper and ``needs.json``) in place of
whatever the task holds under that name (written by descent: a link there is never written
through, red team ``test_redteam_task_image_context``). The image is tagged
``agentpost-task-<id>:<hash>`` where the hash covers the rewritten Dockerfile (which names the
bases by their content hash), ``needs.json``, the helper and every file of the build context,
so an unchanged task is built once and any change rebuilds it.

What cannot be served (an Ubuntu version pin, a package Debian lacks, a ``git+https``
requirement) is in the image's report (``provision_report``), which ``tasks check`` shows.

What the Dockerfile puts in the work directory, ``/root`` or ``/logs`` is what the sandbox starts
with (the docker backend fills its volumes from the image); ``evaluate.prepare`` copies nothing
more for a task with an image.

Layer: io.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path, PurePosixPath

from agentpost.components import resolve
from agentpost.errors import InfraError, InputError
from agentpost.ingress.hostdir import descend, open_regular, open_root, read_fd, walk, write_tree
from agentpost.ingress.keys import Bounds, Refused, TooLarge, relative_key, split_key
from agentpost.sandbox.dockerfile import DockerfileError, is_base, rewrite
from agentpost.sandbox.images import base_tag, build, ensure_base, image_exists, load_from_table
from agentpost.sandbox.provision import (
    CONTEXT_DIR,
    REPORT,
    Needs,
    last_user,
    needs_json,
    provision_lines,
    read_needs,
)
from agentpost.tasks import fields
from agentpost.tasks.compose import compose_file, read_services
from agentpost.tasks.fields import read_task_bytes, read_task_text, tree_digest
from agentpost.tasks.model import Task

HELPERS = [  # run inside the image at build time (sandbox.provision_image and its apt part)
    Path(__file__).resolve().parents[1] / "sandbox" / name
    for name in ("provision_image.py", "provision_apt.py")
]
MAX_TEXT = 2 << 20  # a file larger than this is no script
# files that run (shell, Python, expect, make); data files (JSON, YAML, diffs) are not read
SCRIPT_SUFFIXES = {"", ".sh", ".bash", ".py", ".exp", ".mk"}


def context_hash(context: Path, skip: Path | None = None, *, root: Path) -> str:
    """A content hash of every file (path, exec bits, bytes; a link by its target) under
    ``context``, a dir of task dir ``root``, read by descent (``tasks.fields.tree_digest``)."""
    return tree_digest(context, root, skip=skip, modes=True)


def _texts_under(path: Path | None, out: dict[str, str], root: Path) -> None:
    """The script texts of ``path`` (a file, or every file below a dir, of task dir ``root``),
    read by descent from ``root`` (``ingress.hostdir``): a link on the way or in the tree, a
    FIFO or device is passed over, never followed; a file over ``MAX_TEXT`` or with another
    suffix than ``SCRIPT_SUFFIXES`` is not read; past ``fields.TREE_ENTRIES`` entries it is an
    ``InputError``. Keys are paths relative to ``root``, in path order."""
    if path is None:
        return
    try:
        parts = split_key(relative_key(str(path), str(root)))
        rfd = open_root(root)
    except (Refused, OSError):
        return
    try:
        with descend(rfd, parts[:-1]) as d:
            st = os.stat(parts[-1], dir_fd=d, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                _take(d, parts[-1], "/".join(parts), st, out)
            elif stat.S_ISDIR(st.st_mode):
                with descend(d, parts[-1:]) as top:
                    bounds = Bounds(max_entries=fields.TREE_ENTRIES)
                    found = sorted(walk(top, bounds=bounds), key=lambda e: e[0].split("/"))
                    for key, fst in found:
                        if stat.S_ISREG(fst.st_mode):
                            *sub, name = split_key(key)
                            with descend(top, sub) as fd_dir:
                                _take(fd_dir, name, "/".join([*parts, key]), fst, out)
    except TooLarge as e:
        raise InputError(path, None, f"not read for the image's needs: {e}") from None
    except (Refused, OSError):
        return  # a link on the way, or gone: nothing of it is read
    finally:
        os.close(rfd)


def _take(d: int, name: str, key: str, st: os.stat_result, out: dict[str, str]) -> None:
    if st.st_size > MAX_TEXT or PurePosixPath(name).suffix not in SCRIPT_SUFFIXES:
        return
    try:
        fd = open_regular(d, name, where=key)
        try:
            out[key] = read_fd(fd, MAX_TEXT, key).decode("utf-8")
        finally:
            os.close(fd)
    except (UnicodeDecodeError, Refused, OSError):
        return  # binary data, not a script; or replaced since it was listed


def install_texts(task: Task) -> dict[str, str]:
    """{path in the task: text} of every file whose commands may install at run time: the
    solution's and the tests' (each step's too), TB1's run-tests.sh, the wrong solutions."""
    out: dict[str, str] = {}
    root = task.path
    sol = task.solution_script
    if sol is not None:
        _texts_under(sol.parent if sol.parent != root else sol, out, root)
    for d in (task.tests_dir, *(s.tests_dir for s in task.steps)):
        _texts_under(d, out, root)
    for s in task.steps:
        if s.solution_script is not None:
            _texts_under(s.solution_script.parent, out, root)
    for p in (task.run_tests_script, *task.wrong_solutions):
        _texts_under(p, out, root)
    return out


def task_froms(task: Task, table: dict[str, str] | None = None) -> list[dict]:
    """Each FROM of the task's Dockerfile (and its services') and where it maps, or why not."""
    from agentpost.sandbox.dockerfile import map_from, stage_images

    table = table if table is not None else load_from_table()
    out = []
    files = [task.dockerfile] if task.dockerfile else []
    path = compose_file(task.path, task.environment_dir)
    if path is not None:
        try:
            files += [s.dockerfile for s in read_services(path, task.path) if s.dockerfile]
        except InputError as e:
            out.append({"image": str(path.name), "target": f"unreadable: {e}"})
    for f in files:
        try:
            text = read_task_bytes(f, task.path).decode("utf-8", "replace")
        except InputError as e:
            out.append({"image": str(f.name), "target": f"unreadable: {e.one_line()}"})
            continue
        for image in stage_images(text):
            try:
                out.append({"image": image, "target": map_from(image, table)})
            except DockerfileError as e:
                out.append({"image": image, "target": f"unsupported: {e}"})
    return out


def task_needs(task: Task) -> Needs:
    return read_needs(install_texts(task))


def task_dockerfile(task: Task, table: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """(the rewritten Dockerfile, the base names it needs). Raises ``DockerfileError``."""
    assert task.dockerfile is not None
    table = table if table is not None else load_from_table()
    text = read_task_text(task.dockerfile, task.path)
    rw = rewrite(text, table, lambda name: base_tag(name) if is_base(name) else None)
    bases = [b for b in rw.bases if is_base(b)]
    if not any(b.startswith(("python", "build")) for b in bases):
        return rw.text, bases  # no python3 in the image to run the helper: nothing served
    return rw.text + provision_lines(task_needs(task), last_user(text)), bases


def _context_files(task: Task) -> dict[str, bytes]:
    files = {f"{CONTEXT_DIR}/{p.name}": p.read_bytes() for p in HELPERS}
    return {**files, f"{CONTEXT_DIR}/needs.json": needs_json(task_needs(task))}


def image_tag(task: Task, dockerfile: str) -> str:
    assert task.dockerfile is not None
    context = task.dockerfile.parent
    h = hashlib.sha256(
        dockerfile.encode() + context_hash(context, task.dockerfile, root=task.path).encode()
    )
    for name, data in sorted(_context_files(task).items()):
        h.update(name.encode() + b"\0" + data)
    return f"agentpost-task-{_safe_name(task.id)}:{h.hexdigest()[:12]}"


# Task families with their own images: format → "module:function(task, backend, log) -> tag" (a
# string resolved at run time, so this module imports no family and a family may use it).
FAMILY_IMAGES = {"swebench": "agentpost.tasks.swebench.build:ensure_task_image"}


def ensure_image(task: Task, backend, log=None) -> str | None:
    """The task's image tag, built unless it exists; None when the task has no Dockerfile (the
    backend's default image is used). A Dockerfile that cannot be built offline, or a failed
    build, raises ``InfraError`` naming the task and the reason."""
    if task.format in FAMILY_IMAGES:
        return resolve(FAMILY_IMAGES, task.format, "task image builder")(task, backend, log)
    if task.dockerfile is None:
        return None
    try:
        dockerfile, bases = task_dockerfile(task)
    except DockerfileError as e:
        raise InfraError(f"{task.id}: {e}") from None
    tag = image_tag(task, dockerfile)
    if image_exists(backend, tag):
        return tag
    for b in bases:
        ensure_base(backend, b, log=log or (lambda _msg: None))
    with tempfile.TemporaryDirectory(prefix="agentpost-context-") as tmp:
        context = Path(tmp) / "context"
        shutil.copytree(task.dockerfile.parent, context, symlinks=True)
        _add_context_files(context, _context_files(task))
        ignore = context / ".dockerignore"
        if ignore.is_file() and not ignore.is_symlink():  # its patterns must not drop ours
            with ignore.open("a", encoding="utf-8") as f:
                f.write(f"\n!{CONTEXT_DIR}\n!{CONTEXT_DIR}/**\n")
        try:
            build(backend, tag, dockerfile, str(context), task.build_timeout_s)
        except InfraError as e:
            raise InfraError(f"{task.id}: {e}") from None
    return tag


def _add_context_files(context: Path, files: dict[str, bytes]) -> None:
    """Put agentpost's files (``CONTEXT_DIR/...``) into the build context, a copy of the
    task's dir with its links kept as links: whatever the task holds at ``CONTEXT_DIR`` (a dir, a
    file, a link to a host dir) is removed first (the name is agentpost's), and each file is
    made by descent ``O_EXCL|O_NOFOLLOW`` (``ingress.hostdir.write_tree``), so nothing is ever
    written through a link the task planted (red team: ``test_redteam_task_image_context``)."""
    own = context / CONTEXT_DIR
    if own.is_dir() and not own.is_symlink():
        shutil.rmtree(own)  # our private copy; rmtree removes links inside, never follows them
    elif os.path.lexists(own):
        own.unlink()
    try:
        write_tree(context, files)
    except (Refused, OSError) as e:
        raise InfraError(f"cannot write the build context {context}: {e}") from None


def _safe_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text.lower())


def ensure_service_image(task: Task, svc, backend, log=None) -> str:
    """The image of one compose service (``tasks.compose.ServiceDef``): its Dockerfile (or
    ``FROM image``) rewritten onto the local bases like the task's, tagged by content."""
    table = load_from_table()
    if svc.dockerfile is not None:
        text = read_task_text(svc.dockerfile, task.path)
        context = svc.context
    else:
        text, context = f"FROM {svc.image}\n", None
    try:
        rw = rewrite(text, table, lambda name: base_tag(name) if is_base(name) else None)
    except DockerfileError as e:
        raise InfraError(f"{task.id}: service {svc.name}: {e}") from None
    h = hashlib.sha256(rw.text.encode())
    if context is not None:
        h.update(context_hash(context, svc.dockerfile, root=task.path).encode())
    tag = f"agentpost-task-{_safe_name(task.id)}-{_safe_name(svc.name)}:{h.hexdigest()[:12]}"
    if image_exists(backend, tag):
        return tag
    for b in rw.bases:
        if is_base(b):
            ensure_base(backend, b, log=log or (lambda _msg: None))
    try:
        build(backend, tag, rw.text, str(context) if context else None, task.build_timeout_s)
    except InfraError as e:
        raise InfraError(f"{task.id}: service {svc.name}: {e}") from None
    return tag


def provision_report(backend, tag: str) -> dict | None:
    """The image's record of what it serves and what it cannot (None: an image without one)."""
    out = backend.cli(
        "run", "--rm", "--network", "none", "--entrypoint", "cat", tag, REPORT,
        timeout_s=120, check=False,
    )  # fmt: skip
    try:
        return json.loads(out)
    except ValueError:
        return None


_REPORTS: dict[str, dict | None] = {}


def unservable(task: Task, backend) -> list[dict]:
    """What the task's image cannot serve at run time ({what, why}: an apt pin, a package Debian
    lacks, a wheel PyPI has not for that Python), with the notes its scripts gave (installs
    from a URL or another index) and the Ubuntu version pins its Dockerfile's build drops (known
    before the build); the rest is empty when its image is not built (yet) or has no report."""
    if task.dockerfile is None:
        return []
    try:
        tag = image_tag(task, task_dockerfile(task)[0])
        text = read_task_text(task.dockerfile, task.path)
        pins = [n for n in rewrite(text, load_from_table(), {}).notes if n.startswith("Ubuntu's")]
    except (DockerfileError, OSError):
        return []
    pinned = [{"what": "note", "why": f"Dockerfile: {n}"} for n in pins]
    if tag not in _REPORTS:
        _REPORTS[tag] = provision_report(backend, tag) if image_exists(backend, tag) else None
    report = _REPORTS[tag] or {}
    notes = [{"what": "note", "why": n} for n in report.get("notes", [])]
    subs = [
        {"what": "note", "why": f"{s['what']} is not in this release: served {s['served']}"}
        for s in report.get("substituted", [])
    ]
    return list(report.get("unservable", [])) + subs + pinned + notes
