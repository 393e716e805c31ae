"""Where the tests find real public data: ``../shared/data`` beside the checkout (CI puts the
checkout there), never inside the repository, which holds no file copied from a public
repository (issue 32). Files we wrote ourselves stay in ``tests/data/synthetic``.

Tests take the ``shared_data`` fixture (``tests/conftest.py``: the path, or a skip saying why);
a module that needs the paths while it is collected (to parametrize over files) imports
``TRAJECTORIES`` / ``TASKS`` from here and marks itself ``pytestmark = needed``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO.parent / "shared" / "data").resolve()  # CI: a folder; a worktree: maybe a link
TRAJECTORIES = DATA / "trajectories"
TASKS = DATA / "tasks"
SECURITY = DATA / "security"
REASON = (
    f"real public data lives only in ../shared/data beside the checkout ({DATA} is absent); "
    "CI provides it"
)
present = DATA.is_dir()
needed = pytest.mark.skipif(not present, reason=REASON)


def require() -> Path:
    """``DATA``, or skip the calling test with the reason."""
    if not present:
        pytest.skip(REASON)
    return DATA


def params(files) -> list:
    """Parameters for a test over real files: ``files()`` (a callable, so nothing is read when
    the data is absent), or one parameter skipped with the reason."""
    if not present:
        return [pytest.param(None, marks=needed, id="no-shared-data")]
    return list(files())
