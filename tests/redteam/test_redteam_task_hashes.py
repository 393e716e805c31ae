"""Red team, issue 26 (round three): hashing a task directory reads no host file through a link.

The image tag of a task (``tasks.images.image_tag``: the build context's hash, each compose
service's too) and SCVD's cache key of a task (``scvd.pipeline.task_hash``) hash every file of
a directory written elsewhere. On main both followed a file link (``Path.rglob`` + ``is_file``
+ ``read_bytes``): ``environment/data -> ~/.netrc`` read a host file (here: the canary's atime
moved), and a link to a huge host file was read whole into memory. Now the tree is read by
descent (``tasks.fields.tree_digest``): a link counts by its target's text, never followed, and
the bytes are streamed, bounded in all."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from host_canaries import HostCanaries

from agentpost.errors import InputError
from agentpost.scvd.pipeline import task_hash
from agentpost.tasks import fields
from agentpost.tasks.compose import compose_file, read_services
from agentpost.tasks.images import context_hash
from agentpost.tasks.loader import load_task

SHAPES = Path(__file__).resolve().parents[1] / "tasks" / "fixtures" / "harbor-shapes"


def _task(tmp_path: Path, links: dict[str, Path]) -> Path:
    task = tmp_path / "tasks" / "t"
    shutil.copytree(SHAPES / "compose-service", task)
    for rel, target in links.items():
        os.symlink(target, task / rel)
    return task


def _hashes(task_dir: Path) -> list[str]:
    task = load_task(task_dir)
    svc = [s for s in read_services(compose_file(task.path, task.environment_dir), task.path)
           if s.context is not None]  # fmt: skip
    assert task.dockerfile is not None and svc
    return [
        context_hash(task.dockerfile.parent, task.dockerfile, root=task.path),
        context_hash(svc[0].context, svc[0].dockerfile, root=task.path),
        task_hash(task),
    ]


def test_hashing_a_task_reads_no_host_file_through_a_link(tmp_path: Path):
    canaries = HostCanaries(tmp_path / "host")
    plain = _hashes(_task(tmp_path / "a", {}))
    linked = _task(tmp_path / "b", {"environment/data": canaries.root / "passwd",
                                    "environment/api/key": canaries.root / "canary.txt",
                                    "environment/dir": canaries.root / "dir"})  # fmt: skip
    got = _hashes(linked)
    assert canaries.untouched(), canaries.changes()
    assert all(a != b for a, b in zip(plain, got, strict=True))  # the links count, by target
    os.unlink(linked / "environment" / "data")
    os.symlink(canaries.root / "elsewhere", linked / "environment" / "data")
    assert _hashes(linked) != got  # another target: another hash


def test_a_task_tree_over_its_bound_is_an_input_error(tmp_path: Path, monkeypatch):
    task = _task(tmp_path, {})
    with open(task / "environment" / "sparse.bin", "wb") as f:
        f.truncate(64 << 20)  # 64 MiB apparent, no disk
    monkeypatch.setattr(fields, "TREE_BYTES", 32 << 20)
    with pytest.raises(InputError, match="sparse.bin|over"):
        task_hash(load_task(task))


def test_the_hash_of_a_plain_tree_is_unchanged(tmp_path: Path):
    """No link: the same bytes hashed in the same order as before (cached images and SCVD
    results stay valid). The old loops, written out here."""
    import hashlib

    task = load_task(_task(tmp_path, {}))
    ctx = task.dockerfile.parent
    h = hashlib.sha256()
    for p in sorted(ctx.rglob("*")):
        if p.is_file() and p != task.dockerfile:
            h.update(str(p.relative_to(ctx)).encode() + b"\0")
            h.update(oct(p.stat().st_mode & 0o111).encode() + p.read_bytes() + b"\0")
    assert context_hash(ctx, task.dockerfile, root=task.path) == h.hexdigest()
    h = hashlib.sha256()
    for p in sorted(q for q in Path(task.path).rglob("*") if q.is_file()):
        h.update(str(p.relative_to(task.path)).encode() + b"\0" + p.read_bytes() + b"\0")
    assert task_hash(task) == h.hexdigest()


@pytest.mark.parametrize("rel", ["environment/Dockerfile", "environment/api/Dockerfile"])
def test_a_linked_dockerfile_reads_no_host_file(tmp_path: Path, rel: str):
    """The Dockerfiles are read by the host (rewritten onto the bases, their FROMs listed): on
    main through a link, so a host file became the Dockerfile docker was given."""
    from agentpost.tasks.images import task_dockerfile, task_froms

    canaries = HostCanaries(tmp_path / "host")
    task_dir = _task(tmp_path, {})
    os.unlink(task_dir / rel)
    os.symlink(canaries.root / "canary.txt", task_dir / rel)
    task = load_task(task_dir)
    if rel == "environment/Dockerfile":
        with pytest.raises(InputError, match="Dockerfile"):
            task_dockerfile(task)
    froms = task_froms(task)
    assert any("unreadable" in str(f["target"]) for f in froms), froms
    assert canaries.untouched(), canaries.changes()


def _old_install_texts(task) -> dict[str, str]:
    """The loop ``tasks.images.install_texts`` used before (rglob + is_file + read_bytes)."""
    from agentpost.tasks.images import MAX_TEXT, SCRIPT_SUFFIXES

    out: dict[str, str] = {}
    root = task.path

    def under(path):
        if path is None or not path.exists() or path.is_symlink():
            return
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in files:
            if p.is_symlink() or p.stat().st_size > MAX_TEXT or p.suffix not in SCRIPT_SUFFIXES:
                continue
            try:
                out[str(p.relative_to(root))] = p.read_bytes().decode("utf-8")
            except (UnicodeDecodeError, OSError, ValueError):
                continue

    sol = task.solution_script
    if sol is not None:
        under(sol.parent if sol.parent != root else sol)
    for d in (task.tests_dir, *(s.tests_dir for s in task.steps)):
        under(d)
    for s in task.steps:
        if s.solution_script is not None:
            under(s.solution_script.parent)
    for p in (task.run_tests_script, *task.wrong_solutions):
        under(p)
    return out


def test_the_texts_read_for_image_needs_are_bounded_and_unchanged(tmp_path: Path, monkeypatch):
    """``install_texts`` (what the solution and tests install, for the image's offline
    provisioning) read every file under ``tests/`` and ``solution/``: on main without a bound
    on their number. Now by descent, bounded by ``fields.TREE_ENTRIES``; for a task without
    links it reads the same texts in the same order (``needs.json`` and image tags stay)."""
    from agentpost.tasks.images import install_texts
    from agentpost.tasks.loader import bundled_suite_path

    for name in ("csv-to-json", "c-primes"):
        task = load_task(bundled_suite_path() / name)
        got = install_texts(task)
        assert got and list(got.items()) == list(_old_install_texts(task).items())
    task_dir = _task(tmp_path, {})
    many = task_dir / "tests" / "many"
    many.mkdir()
    for i in range(40):
        (many / f"f{i}.sh").write_text("echo\n")
    monkeypatch.setattr(fields, "TREE_ENTRIES", 30)
    with pytest.raises(InputError, match="many|entries|over"):
        install_texts(load_task(task_dir))
