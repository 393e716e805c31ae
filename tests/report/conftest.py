"""The demo run the report tests share: `agentpost demo` on the first ``DEMO_LIMIT`` tasks of
each bundled suite, once per test session (test_report_demo checks it, test_advice_runs runs
the advice its verdict prints)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

DEMO_LIMIT = 2


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], float]:
    """(report path, progress lines, seconds) of one demo run in real bubblewrap sandboxes."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    from agentpost.demo.pipeline import run_demo

    out = tmp_path_factory.mktemp("demo")
    lines: list[str] = []
    t0 = time.monotonic()
    path = run_demo(out, limit=DEMO_LIMIT, progress=lines.append)
    return path, lines, time.monotonic() - t0
