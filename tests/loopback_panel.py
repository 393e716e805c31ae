"""A judge panel of three OpenAI-compatible seats answered by a loopback server from the
bundled SCVD edge cases' labels (each answer is the label of the case the prompt names), shared
by the tests that run ``diagnose`` with model judges (tests/scvd, tests/replay). It sits in
tests/ so every test folder imports it on its own (tests/conftest.py puts tests/ on sys.path)."""

from __future__ import annotations

import json
import re

from agentpost.scvd.examples import EDGE_CASES, edge_case
from agentpost.scvd.pipeline import DiagnoseOptions

CASES = [edge_case(n) for n in EDGE_CASES]
LABELS = {t.id: lab for t, lab in CASES}
N_CALLS = 3 * len(CASES)


def answer(body) -> str:
    case = re.search(r"^case_id: (.*)$", body["messages"][1]["content"], re.M).group(1)
    return json.dumps(LABELS[case])


def config(url: str) -> dict:
    j = {
        "kind": "openai",
        "model": "loopback",
        "base_url": url,
        "backoff_s": 0.01,
        "max_retries": 2,
    }
    return {"judges": [{"id": f"j{i}", **j, "extra_body": {"seed": i}} for i in range(3)],
            "arbiter": "j0", "concurrency": 1}  # fmt: skip


def opts() -> DiagnoseOptions:
    return DiagnoseOptions(n_boot=50, progress=False)
