"""`agentpost security build-suite` end to end with the scripted teacher (through the loopback
chat server and the real transport) and real sandbox filters: three size-matched recipes
written as SFT rows, every verdict counted, and a rerun served from the result store."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from agentpost.store import Store

CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]


def build(out: Path, store: Path, *extra: str) -> dict:
    r = subprocess.run(
        [*CLI, "security", "build-suite", "-o", str(out), "--task", "calculator", "--task",
         "file-download", "--samples", "4", "--store", str(store), *extra],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_build_suite_writes_three_size_matched_recipes(tmp_path, backend):
    from agentpost.sft.io import read_rows

    store = tmp_path / "store.sqlite"
    summary = build(tmp_path / "out", store)
    # per task and type: one distinct passing answer of the scripted teacher's four
    assert summary["examples"] == {"functional_coding": 2, "security_coding": 2, "planning": 2,
                                   "testing": 2}  # fmt: skip
    assert summary["recipes"] == {"security_only": 2, "simple_mixture": 2, "security_suite": 2}
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    v = {ty: e["verdicts"] for ty, e in manifest["examples"].items()}
    assert v["security_coding"] == {"kept": 4, "duplicate_or_over_cap": 2, "sec_fail": 2,
                                    "no_diff": 2}  # fmt: skip
    assert v["planning"] == {"kept": 2, "wrong_cwe": 4, "bad_format": 2}
    assert v["testing"] == {"kept": 2, "passes_on_vulnerable": 2, "fails_on_secure": 2,
                            "touches_implementation": 2}  # fmt: skip
    assert manifest["producer"]["args"]["teacher"].startswith("scripted-teacher (offline")
    suite = read_rows(tmp_path / "out" / "security_suite.parquet")
    only = read_rows(tmp_path / "out" / "security_only.parquet")
    assert {r.meta["task_type"] for r in only} == {"security_coding"}
    assert {r.meta["recipe"] for r in suite} == {"security_suite"}
    for row in suite + only:
        assert row.trained == [len(row.messages) - 1]  # only the teacher's answer is a target
        assert [m["role"] for m in row.messages] == ["system", "user", "assistant"]
    assert sum(manifest["recipes"]["security_suite"]["types"].values()) == 2
    # the rerun is served from the store: same output, no new entries
    n = Store(store).count("suite-sample")
    assert n == 2 * 4 * 4
    again = build(tmp_path / "again", store)
    assert {**again, "out": None} == {**summary, "out": None}
    assert Store(store).count("suite-sample") == n
    assert Counter(r.meta["task_id"] for r in read_rows(tmp_path / "again" / "examples" /
                   "testing.parquet")) == {"calculator": 1, "file-download": 1}  # fmt: skip


def test_bad_options_are_one_line_errors(tmp_path):
    r = subprocess.run([*CLI, "security", "build-suite", "-o", str(tmp_path), "--plan-match", "loose"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (
        r.returncode != 0 and "--plan-match" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    )
    r = subprocess.run([*CLI, "security", "build-suite", "-o", str(tmp_path), "--teacher",
                        "http://127.0.0.1:9/v1"], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode != 0 and "use --base-url URL --teacher MODEL" in r.stderr  # the old form
    assert "error: --teacher: " in r.stderr  # ... still needs the model's name
    r = subprocess.run([*CLI, "security", "build-suite", "-o", str(tmp_path), "--teacher", "m"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 2 and r.stderr.strip().startswith("error: --base-url: a model teacher")


def test_a_failed_teacher_call_is_counted_not_kept(backend):
    """Through the real transport to the loopback server: a 400 is a teacher error (no row), and
    answers in no format are rejected by every filter without reaching a sandbox."""
    from agentpost.agent.loopback import LoopbackServer
    from agentpost.agent.transport import OpenAITransport, TransportConfig
    from agentpost.security.cwe import load_plan_match
    from agentpost.security.recipes.build import build_examples
    from agentpost.security.recipes.teachers import load_names
    from agentpost.security.suite import find_task

    match = load_plan_match()
    plan = {"mode": "exact", "groups": match["theme_groups"], "generic": match["generic_parent"]}
    with LoopbackServer(lambda body: "I would rather not.") as srv:
        srv.fail("400")
        teacher = OpenAITransport(TransportConfig(model="m", base_url=srv.url, top_logprobs=0,
                                                  max_retries=0))  # fmt: skip
        pools, stats = build_examples([find_task("calculator")], teacher, "m", names=load_names(),
                                      allowed=match["allowed"], plan=plan, samples=2,
                                      backend=backend, workers=1)  # fmt: skip
    assert all(not rows for rows in pools.values())
    total = sum(stats.values(), Counter())
    assert total["teacher_error"] == 1 and sum(total.values()) == 8
    assert stats["testing"]["bad_format"] + stats["planning"]["bad_format"] >= 3
