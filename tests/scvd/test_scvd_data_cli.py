"""`agentpost scvd collect|ftd|match` through the CLI: one-line input errors, a teacher budget
that stops the run without storing the unfinished cases, and matched files for TRL and verl."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from agentpost import cli
from agentpost.agent.loopback import LoopbackServer
from agentpost.sft.io import write_rows
from agentpost.sft.rows import make_row
from agentpost.store import Store


def invoke(*args):
    cli._register()
    return CliRunner().invoke(cli.app, [str(a) for a in args])


def test_bad_input_is_one_line(tmp_path):
    res = invoke("scvd", "collect", tmp_path / "missing.jsonl", "-o", tmp_path / "o")
    assert res.exit_code != 0 and "no such trajectory file" in str(res.exception)
    res = invoke("scvd", "collect", tmp_path / "missing.jsonl", "--handoff", "middle")
    assert "--handoff: CollectOptions.handoff must be one of tool_call, step" in str(res.exception)
    res = invoke("scvd", "ftd", "--teacher", "some-model", "-o", tmp_path / "o")
    assert "a model teacher needs --base-url" in str(res.exception)
    res = invoke("scvd", "ftd", "--task", "nope", "-o", tmp_path / "o")
    assert "no task named nope" in str(res.exception)


def test_match_writes_trl_and_verl_files(tmp_path):
    msgs = [{"role": "user", "content": "t"}, {"role": "assistant", "content": "a"}]
    a = write_rows(
        [make_row(msgs, 0, {"task_id": t}) for t in ("x", "x", "y")], tmp_path / "scvd.parquet"
    )
    b = write_rows(
        [make_row(msgs, 0, {"task_id": t}) for t in ("x", "z")], tmp_path / "ftd.parquet"
    )
    res = invoke("scvd", "match", a, b, "-o", tmp_path / "m", "--verl")
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "m" / "match.json").read_text())
    assert doc["rows_out"] == [1, 1] and doc["per_task"] == {"x": 1}
    verl = pq.read_table(tmp_path / "m" / "scvd.matched.verl.parquet").to_pylist()
    assert [m["loss_mask"] for m in verl[0]["messages"]] == [0, 1]


@pytest.mark.usefixtures("backend")
def test_a_teacher_budget_stops_ftd_and_the_rerun_finishes(tmp_path):
    from agentpost.agent.policies import write_and_run
    from agentpost.tasks.loader import bundled_suite_path, load_suite

    task = next(t for t in load_suite(bundled_suite_path("terminal")) if t.id == "greet-cli")
    fix = write_and_run(task.solution_script, "t")

    def replies(body):  # solve first, then submit (by the conversation, not by call count)
        if not any(m["role"] == "tool" for m in body["messages"]):
            return {
                "content": "solve",
                "tool_calls": [{"name": "bash", "arguments": {"command": fix}}],
            }
        return {"content": "done", "tool_calls": [{"name": "submit", "arguments": {}}]}

    with LoopbackServer(replies) as srv:
        base = ["scvd", "ftd", "--task", "greet-cli", "--teacher", "lb", "--base-url", srv.url,
                "-o", tmp_path, "--no-progress"]  # fmt: skip
        res = invoke(*base, "--token-budget", "1")
        assert res.exit_code == 0, res.output
        assert json.loads((tmp_path / "ftd.json").read_text())["status"] == {"budget_exceeded": 1}
        assert Store(tmp_path / "store.sqlite").count("scvd-ftd") == 0  # not stored: retried later
        res = invoke(*base)
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "ftd.json").read_text())["status"] == {"kept": 1}
