"""Task images for the docker backend: stable content tags; a real build when a daemon answers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentpost.tasks.images import image_tag
from agentpost.tasks.loader import bundled_suite_path, load_task

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_image_tag_follows_environment_content(tmp_path: Path) -> None:
    root = tmp_path / "c-primes"
    shutil.copytree(bundled_suite_path() / "c-primes", root)
    tag = image_tag(load_task(root))
    assert tag == image_tag(load_task(bundled_suite_path() / "c-primes"))
    assert tag.startswith("agentpost-task-c-primes:") and len(tag.split(":")[1]) == 12
    (root / "environment" / "README.md").write_text("changed\n")
    assert image_tag(load_task(root)) != tag
    assert image_tag(load_task(FIXTURES / "tb1-hello")) is None  # no environment/Dockerfile


def test_tasks_check_on_docker_when_a_daemon_answers() -> None:
    from agentpost.sandbox.registry import get_backend
    from agentpost.tasks.check import check_suite

    backend = get_backend("docker")
    if not backend.available():
        pytest.skip("no docker daemon")
    task = load_task(bundled_suite_path() / "csv-to-json")
    row = check_suite([task], backend, workers=1)["tasks"][0]
    assert (row["oracle_reward"], row["nop_reward"], row["wrong_reward"]) == (1.0, 0.0, 0.0)
