"""SCVD collection on the bundled terminal suite, in real bwrap sandboxes: scripted students, a
scripted teacher and one through the loopback OpenAI-compatible server; g_ver is removed byte for
byte, no student-prefix token carries a label, every rejection is counted, infrastructure
failures are retried (bounded), multi-call steps hand off at the call."""

from __future__ import annotations

import json

import pytest

from agentpost.agent.loop import LoopConfig
from agentpost.agent.loopback import LoopbackServer
from agentpost.agent.policies import policy_model
from agentpost.agent.run import Agent, Rollout, rollout_one
from agentpost.agent.scripted import ScriptedModel
from agentpost.errors import InfraError
from agentpost.judges.config import DEFAULT_CONFIG, build_panel
from agentpost.scvd.distill.collect import CollectOptions, collect, conversation
from agentpost.scvd.distill.ftd import ftd
from agentpost.scvd.distill.samples import BEGIN, G_VER
from agentpost.scvd.distill.teacher import Teacher, make_teacher
from agentpost.sft.rows import IGNORE, from_record, template_messages, tokenize_row
from agentpost.store import Store
from agentpost.tasks.loader import bundled_suite_path, load_suite

TASKS = {t.id: t for t in load_suite(bundled_suite_path("terminal"))}
IDS = ["csv-to-json", "greet-cli"]


class Recording:
    """Wraps a model and keeps every conversation it was asked to continue."""

    def __init__(self, model):
        self.model, self.name, self.seen = model, model.name, []

    def complete(self, messages, tools=None):
        self.seen.append(json.loads(json.dumps(messages)))
        return self.model.complete(messages, tools)


def student(backend, policy: str, task_id: str, model=None):
    task = TASKS[task_id]
    make = (lambda t: model) if model else (lambda t: policy_model(policy, t))
    return rollout_one(
        Rollout(task, Agent(f"scripted/{policy}", make), 0), backend, LoopConfig(), "r"
    )


def panel():
    return build_panel(DEFAULT_CONFIG, "default", None)


OPTS = CollectOptions(progress=False, concurrency=2)


@pytest.fixture(scope="module")
def students(backend):
    return [student(backend, p, t) for t in IDS for p in ("hasty", "wrong-then-repaired")]


def test_conversation_is_what_the_loop_sent(backend):
    rec = Recording(policy_model("wrong-then-repaired", TASKS["csv-to-json"]))
    traj = student(backend, "wrong-then-repaired", "csv-to-json", rec)
    msgs = conversation(traj)
    last = rec.seen[-1]  # the context of the final call: everything before its reply
    assert [m["role"] for m in msgs[: len(last)]] == [m["role"] for m in last]
    for ours, sent in zip(msgs, last, strict=False):
        assert ours["content"] == sent["content"]
        assert [c["function"] for c in ours.get("tool_calls", [])] == [
            c["function"] for c in sent.get("tool_calls", [])]  # fmt: skip


def test_collect_keeps_verified_rows_with_g_ver_removed_and_the_prefix_masked(students, tmp_path):
    seen = []
    base = make_teacher("scripted", "verify-repair")

    def make(task):
        r = Recording(base.make(task))
        seen.append(r)
        return r

    teacher = Teacher(base.label, make, base.fingerprint)
    res = collect(
        students, list(TASKS.values()), panel(), teacher, Store(tmp_path / "s.sqlite"), OPTS
    )
    assert [r["status"] for r in res] == ["kept"] * 4
    from agentpost.train.tiny import char_chat_tokenizer

    tok = char_chat_tokenizer()
    for r in res:
        row = from_record(r["row"])
        start = min(row.trained)
        prefix = [{k: v for k, v in m.items() if k != "train"} for m in row.messages[:start]]
        # the teacher saw this prefix with exactly one g_ver block on the boundary observation
        ctx = next(s.seen[0] for s in seen if s.seen[0][1] == prefix[1] and len(s.seen[0]) == start
                   and s.seen[0][2]["content"] == prefix[2]["content"])  # fmt: skip
        assert sum(BEGIN in (m.get("content") or "") for m in ctx) == 1
        assert ctx[-1]["content"] == prefix[-1]["content"] + BEGIN + G_VER + (
            "\n<<<end of verification hand-off>>>")  # fmt: skip
        assert [m["content"] for m in ctx[:-1]] == [m["content"] for m in prefix[:-1]]
        assert all(G_VER not in (m.get("content") or "") for m in row.messages)
        # only teacher assistant messages are trained; no prefix token carries a label
        assert all(row.messages[i]["role"] == "assistant" for i in row.trained)
        t = tokenize_row(row, tok, max_length=100_000)
        head = tok.apply_chat_template(template_messages(row.messages[:start]), tokenize=False,
                                       add_generation_prompt=True)  # fmt: skip
        n_prefix = len(tok(head, add_special_tokens=False)["input_ids"])
        assert all(x == IGNORE for x in t.labels[:n_prefix]) and t.labels[n_prefix] != IGNORE
        assert row.meta["teacher"] == "scripted-teacher/verify-repair"
        assert row.meta["state_source"] == "replay" and row.meta["source"] == "scvd"
    # the hasty student's candidate is wrong: its teacher repaired it (check, fix, re-check)
    hasty = from_record(res[0]["row"])
    assert sum(m["train"] for m in hasty.messages) == 4


def test_rejections_are_counted_and_infra_failures_retried(students, backend, tmp_path):
    lazy = Teacher("submit-only", lambda t: ScriptedModel(
        [{"content": "done", "tool_calls": [{"id": "t0", "name": "submit", "arguments": {}}]}]),
        {"label": "submit-only"})  # fmt: skip
    looker = ScriptedModel([{"content": "hm", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
                            {"content": "ok", "tool_calls": [{"name": "submit", "arguments": {}}]}])  # fmt: skip
    idle = student(backend, "idle", "csv-to-json", looker)
    orphan = students[0].model_copy(update={"id": "orphan", "task_id": "no-such-task"})
    store = Store(tmp_path / "s.sqlite")
    res = collect([*students[:2], idle, orphan], list(TASKS.values()), panel(), lazy, store, OPTS)
    # the hasty candidate is wrong, so submitting it fails; wrong-then-repaired's candidate (the
    # first, wrong, solution) too
    assert [r["status"] for r in res] == [
        "teacher_failed",
        "teacher_failed",
        "no_candidate",
        "task_missing",
    ]
    calls = {"n": 0}

    def flaky(task):
        calls["n"] += 1
        if calls["n"] == 1:
            raise InfraError("endpoint went away")
        return make_teacher("scripted", "verify-repair").make(task)

    t = Teacher("flaky", flaky, {"label": "flaky"})
    res = collect(
        students[:1],
        list(TASKS.values()),
        panel(),
        t,
        store,
        CollectOptions(progress=False, max_retries=1),
    )
    assert res[0]["status"] == "kept" and res[0]["attempts"] == 2

    def broken(task):
        raise InfraError("down")

    t = Teacher("broken", broken, {"label": "broken"})
    res = collect(
        students[:1],
        list(TASKS.values()),
        panel(),
        t,
        store,
        CollectOptions(progress=False, max_retries=2),
    )
    assert res[0]["status"] == "infra_error" and res[0]["attempts"] == 3
    # stored: the two teacher runs and the flaky success (no_candidate and task_missing need no
    # work to decide; the infra error is left for the next run to retry)
    assert store.count("scvd-collect") == 3


def test_a_multi_call_step_hands_off_at_the_call(backend, tmp_path):
    task = TASKS["csv-to-json"]
    from agentpost.agent.policies import write_and_run

    both = [{"name": "bash", "arguments": {"command": write_and_run(task.wrong_solutions[0], "c")}},
            {"name": "bash", "arguments": {"command": task.check + " ; echo CHECK-RAN"}}]  # fmt: skip
    traj = student(backend, "one-step", "csv-to-json", ScriptedModel(
        [{"content": "write and check", "tool_calls": both},
         {"content": "done", "tool_calls": [{"name": "submit", "arguments": {}}]}]))  # fmt: skip
    assert "CHECK-RAN" in traj.turns[0].observations[1].text
    teacher = make_teacher("scripted", "verify-repair")
    res = {}
    for handoff in ("tool_call", "step"):
        opts = CollectOptions(progress=False, handoff=handoff)
        res[handoff] = collect(
            [traj], [task], panel(), teacher, Store(tmp_path / f"{handoff}.sqlite"), opts
        )[0]
    tc, st = (from_record(res[h]["row"]) for h in ("tool_call", "step"))
    assert res["tool_call"]["boundary"] == [0, 0] and tc.meta["boundary"] == [0, 0]
    prefix = tc.messages[: min(tc.trained)]
    assert len(prefix[2]["tool_calls"]) == 1  # the dropped check call is not in the history
    assert all("CHECK-RAN" not in (m["content"] or "") for m in prefix)  # nor its output
    assert st.meta["boundary"] == [0, 1]
    assert "CHECK-RAN" in st.messages[min(st.trained) - 1]["content"]  # the replayed screen


def test_an_openai_compatible_teacher_through_the_loopback_server(students, tmp_path):
    task = TASKS["csv-to-json"]
    from agentpost.agent.policies import write_and_run

    fix = write_and_run(task.solution_script, "fix")
    replies = [{"content": "fix", "tool_calls": [{"name": "bash", "arguments": {"command": fix}}]},
               {"content": "done", "tool_calls": [{"name": "submit", "arguments": {}}]}]  # fmt: skip
    with LoopbackServer(replies) as srv:
        teacher = make_teacher(
            "loopback-teacher", "verify-repair", base_url=srv.url, backoff_s=0.01
        )
        res = collect(students[:1], [task], panel(), teacher, Store(tmp_path / "s.sqlite"), OPTS)
        assert BEGIN in srv.requests[0]["messages"][-1]["content"]
    r = res[0]
    assert r["status"] == "kept", r
    assert from_record(r["row"]).meta["teacher"] == "loopback-teacher"
    assert r["usage"]["input_tokens"] > 0 and r["teacher_turns"] == 2


def test_ftd_trains_every_teacher_message(backend, tmp_path):
    teacher = make_teacher("scripted", "solve")
    res = ftd([TASKS[i] for i in IDS], teacher, Store(tmp_path / "f.sqlite"), OPTS)
    assert [r["status"] for r in res] == ["kept", "kept"]
    row = from_record(res[0]["row"])
    assert [m["train"] for m in row.messages if m["role"] == "assistant"] == [True] * 3
    assert not any(m["train"] for m in row.messages if m["role"] != "assistant")
    assert all(BEGIN not in (m["content"] or "") for m in row.messages)  # plain prompt, no g_ver
