"""Fixtures shared by tests in several areas: a real bubblewrap sandbox backend, and the real
public data in ../shared/data (``shared_data``; see ``tests/shared_data.py``).

A test that takes ``backend`` runs in real bwrap sandboxes and is skipped where bubblewrap
cannot start one; ``tmux_backend`` also needs tmux (keystroke replay). A module may still define
its own ``backend`` fixture (tests/sandbox/test_sandbox_docker.py does); the nearer one wins.
"""

from __future__ import annotations

import shutil

import pytest
import shared_data as _shared


@pytest.fixture(scope="module")
def backend():
    from agentpost.sandbox.registry import get_backend

    b = get_backend("bwrap")
    if not b.available():
        pytest.skip("bubblewrap sandbox not available")
    return b


@pytest.fixture(scope="module")
def docker():
    """The docker backend; the test skips, saying how to start one, when no daemon answers."""
    from agentpost.sandbox.registry import get_backend

    b = get_backend("docker")
    if not b.available():
        pytest.skip("no docker daemon answers (bash scripts/dockerd.sh start)")
    return b


@pytest.fixture(scope="module")
def python_image(docker) -> str:
    """The offline ``python`` base image (built on first use, cached by content hash)."""
    from agentpost.sandbox.images import ensure_base

    return ensure_base(docker, "python")


@pytest.fixture(scope="module")
def tmux_backend(backend):
    if not shutil.which("tmux"):
        pytest.skip("tmux not available")
    return backend


@pytest.fixture(scope="session")
def shared_data():
    """``../shared/data`` beside the checkout (real public trajectories, tasks, security data);
    the test is skipped, saying why, when it is absent."""
    return _shared.require()
