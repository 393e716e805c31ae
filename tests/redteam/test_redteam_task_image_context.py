"""Red team, issue 26 (round three): building a task's image writes no host file.

``tasks.images.ensure_image`` copies the task's ``environment/`` into a temp build context
(links kept as links) and then writes agentpost's own provision files into
``.agentpost-provision/`` there. On main it wrote them by path (``Path.write_bytes``), after the
copy: a task whose ``environment/.agentpost-provision`` is a link to a host dir made agentpost
(as root) create its files in that dir, and ``.agentpost-provision/needs.json -> a host file``
overwrote that file. The name is agentpost's: whatever the task holds there is replaced, and our
files are written by descent (``O_EXCL|O_NOFOLLOW``), never through a link.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from host_canaries import HostCanaries

from agentpost.errors import InfraError
from agentpost.sandbox.provision import CONTEXT_DIR
from agentpost.tasks.images import ensure_image
from agentpost.tasks.loader import load_task

SHAPES = Path(__file__).resolve().parents[1] / "tasks" / "fixtures" / "harbor-shapes"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("how", ["dir-link", "file-link"])
def test_a_link_at_the_provision_dir_writes_no_host_file(tmp_path: Path, docker, how: str):
    canaries = HostCanaries(tmp_path / "host")
    task_dir = tmp_path / "tasks" / "t"
    shutil.copytree(SHAPES / "compose-service", task_dir)
    env = task_dir / "environment"
    if how == "dir-link":
        os.symlink(canaries.root / "dir", env / CONTEXT_DIR)
    else:
        (env / CONTEXT_DIR).mkdir()
        os.symlink(canaries.root / "passwd", env / CONTEXT_DIR / "needs.json")
    tag = None
    try:
        tag = ensure_image(load_task(task_dir), docker)
    except InfraError:
        pass  # a failed build is not the point; what it wrote on the host is
    finally:
        if tag:
            subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)
    assert canaries.untouched(), canaries.changes()
    assert tag is not None  # the task's own entry is replaced by ours: the image builds
    assert os.path.islink(
        env / CONTEXT_DIR if how == "dir-link" else env / CONTEXT_DIR / "needs.json"
    )
