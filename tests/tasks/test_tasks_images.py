"""Task images for the docker backend: tags follow content; builds are cached by that tag."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from agentpost.tasks.images import ensure_image, image_tag, task_dockerfile
from agentpost.tasks.loader import bundled_suite_path, load_task

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _tag(task):
    return image_tag(task, task_dockerfile(task)[0])


def test_image_tag_follows_environment_and_verifier_content(tmp_path: Path) -> None:
    root = tmp_path / "c-primes"
    shutil.copytree(bundled_suite_path() / "c-primes", root)
    tag = _tag(load_task(root))
    assert tag == _tag(load_task(bundled_suite_path() / "c-primes"))
    assert tag.startswith("agentpost-task-c-primes:") and len(tag.split(":")[1]) == 12
    (root / "environment" / "README.md").write_text("changed\n")
    changed = _tag(load_task(root))
    assert changed != tag
    test_sh = root / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text() + "\npip install pytest==8.4.1\n")
    assert _tag(load_task(root)) != changed  # a new verifier tool is a new image
    assert load_task(FIXTURES / "tb1-hello").dockerfile is None


def test_a_built_image_is_reused(tmp_path: Path) -> None:
    from agentpost.sandbox.docker import DockerBackend

    backend = DockerBackend()
    if not backend.available():
        pytest.skip("no docker daemon answers (bash scripts/dockerd.sh start)")
    task = load_task(bundled_suite_path() / "csv-to-json")
    tag = ensure_image(task, backend)
    t0 = time.monotonic()
    assert ensure_image(task, backend) == tag
    assert time.monotonic() - t0 < 5  # one `docker image inspect`, no build


def test_an_ubuntu_pin_the_build_drops_is_named_by_tasks_check(tmp_path: Path, docker) -> None:
    """TB2's overfull-hbox pins Ubuntu's texlive version; the build serves Debian's, and says so
    (before the image is built, too)."""
    from agentpost.tasks.images import unservable

    root = tmp_path / "ubuntu-pin"
    shutil.copytree(FIXTURES / "harbor-shapes" / "py313-verifier", root)
    (root / "environment" / "Dockerfile").write_text(
        "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y bc=1.07.1-3ubuntu4\n"
    )
    notes = [u["why"] for u in unservable(load_task(root), docker)]
    assert "Dockerfile: Ubuntu's bc=1.07.1-3ubuntu4: this release's version of bc served" in notes
