"""Judges: the re-ask loop, and the OpenAI-compatible judge against the real loopback server
under every fault (429, 500, timeout, dropped connection, malformed JSON, a rule-breaking
annotation). Nothing is lost: every raw answer and error is kept in the result."""

from __future__ import annotations

import json

import pytest

from agentpost.agent.loopback import LoopbackServer
from agentpost.judges.ask import messages_key
from agentpost.judges.remote import OpenAIJudge, RecordedJudge
from agentpost.judges.scripted import ScriptedJudge
from agentpost.scvd.examples import edge_case
from agentpost.scvd.judging import HeuristicJudge, annotate_one

TRAJ, LABEL = edge_case("fail-then-repair")
GOOD = json.dumps(LABEL)
BAD_RULE5 = json.dumps({**LABEL, "verification_triggered": False})  # outcome set: breaks rule 5


def judge(server: LoopbackServer, **kw) -> OpenAIJudge:
    opts = {"max_retries": 3, "backoff_s": 0.01, "timeout_s": 5.0, **kw}
    return OpenAIJudge("j", "loopback", server.url, **opts)


def test_valid_first_answer() -> None:
    res = annotate_one(ScriptedJudge("s", [GOOD]), TRAJ, TRAJ.id)
    assert res.status == "valid" and res.attempts == 1
    assert res.annotation.semantics_tuple() == (True, True, "error")


def test_reask_carries_the_error_then_abstains_after_two() -> None:
    seen = []

    def replies(messages, case_id):
        seen.append(messages)
        return BAD_RULE5

    res = annotate_one(ScriptedJudge("s", replies), TRAJ, TRAJ.id)
    assert res.status == "abstained" and res.annotation is None
    assert res.attempts == 3 and len(res.raw) == 3 and len(res.errors) == 3
    assert "rule 5" in seen[1][-1]["content"] and seen[1][-2] == {
        "role": "assistant",
        "content": BAD_RULE5,
    }
    assert len(res.request_keys) == 3 == len(set(res.request_keys))


def test_heuristic_judge_goes_through_the_same_parser() -> None:
    res = annotate_one(HeuristicJudge("h", "artifact"), TRAJ, TRAJ.id)
    assert res.status == "valid" and res.annotation.z == "error"


@pytest.mark.parametrize("fault", ["429", "500", "drop"])
def test_retryable_faults_are_retried_by_the_transport(fault) -> None:
    with LoopbackServer([GOOD]) as srv:
        srv.fail(fault)
        j = judge(srv)
        res = annotate_one(j, TRAJ, TRAJ.id)
        assert res.status == "valid" and res.attempts == 1
        assert len(srv.requests) == 2
        body = srv.requests[-1]
        assert body["temperature"] == 0 and body["response_format"] == {"type": "json_object"}
        assert res.usage["input_tokens"] > 0
        assert j.transport.ledger.summary()["failed_attempts"] == 1


def test_timeout_is_retried() -> None:
    with LoopbackServer([GOOD, GOOD], slow_s=1.5) as srv:
        srv.fail("slow")
        res = annotate_one(judge(srv, timeout_s=0.5), TRAJ, TRAJ.id)
        assert res.status == "valid" and len(srv.requests) == 2


def test_a_malformed_body_is_an_endpoint_fault_the_transport_retries() -> None:
    """A broken 200 body is the server's fault, not the judge's answer: the transport retries
    it (as a 5xx) and the judge's one question gets the good answer."""
    with LoopbackServer([GOOD]) as srv:
        srv.fail("malformed")
        res = annotate_one(judge(srv), TRAJ, TRAJ.id)
        assert res.status == "valid" and res.attempts == 1 and len(srv.requests) == 2


def test_rule_breaking_annotation_is_reasked_with_the_error() -> None:
    with LoopbackServer([BAD_RULE5, GOOD]) as srv:
        res = annotate_one(judge(srv), TRAJ, TRAJ.id)
        assert res.status == "valid" and res.attempts == 2
        assert "rule 5" in srv.requests[1]["messages"][-1]["content"]
        assert res.raw == [BAD_RULE5, GOOD]


def test_persistent_failure_ends_as_infra_error_with_the_error_kept() -> None:
    with LoopbackServer([GOOD]) as srv:
        srv.fail("500", "500", "500", "500")
        res = annotate_one(judge(srv, max_retries=3), TRAJ, TRAJ.id)
        assert res.status == "infra_error" and res.annotation is None
        assert "ModelUnavailable" in res.errors[0] and len(srv.requests) == 4


def test_budget_stops_new_calls() -> None:
    with LoopbackServer([BAD_RULE5, GOOD]) as srv:
        res = annotate_one(judge(srv, max_total_tokens=10), TRAJ, TRAJ.id)
        assert res.status == "budget" and len(srv.requests) == 1  # the re-ask was never sent


def test_recorded_judge_replays_saved_answers(tmp_path) -> None:
    first = annotate_one(ScriptedJudge("s", [BAD_RULE5, GOOD]), TRAJ, TRAJ.id)
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps({"judge": "s", "key": k, "raw": r}) + "\n"
                            for k, r in zip(first.request_keys, first.raw, strict=True)))  # fmt: skip
    again = annotate_one(RecordedJudge("s", path), TRAJ, TRAJ.id)
    assert again.status == "valid" and again.raw == first.raw
    assert again.annotation == first.annotation
    missing = annotate_one(RecordedJudge("other", path, judge="nobody"), TRAJ, TRAJ.id)
    assert missing.status == "abstained" and "no recorded answer" in missing.errors[0]
    assert messages_key([{"a": 1}]) == messages_key([{"a": 1}])


def test_prose_instead_of_json_is_reasked_with_the_parse_error() -> None:
    prose = "The agent verified its work, so verification_triggered is true."
    with LoopbackServer([prose, GOOD]) as srv:
        res = annotate_one(judge(srv), TRAJ, TRAJ.id)
        assert res.status == "valid" and res.raw == [prose, GOOD]
        assert "not a single JSON object" in srv.requests[1]["messages"][-1]["content"]
        assert srv.requests[1]["messages"][-2] == {"role": "assistant", "content": prose}


def test_three_invalid_answers_from_the_server_end_in_an_abstention_with_all_kept() -> None:
    with LoopbackServer([BAD_RULE5, "{}", BAD_RULE5, GOOD]) as srv:
        res = annotate_one(judge(srv), TRAJ, TRAJ.id)
        assert res.status == "abstained" and res.annotation is None
        assert len(srv.requests) == 3  # the first ask and two re-asks; GOOD is never requested
        assert res.raw == [BAD_RULE5, "{}", BAD_RULE5]
        assert [e.split(":")[0] for e in res.errors] == ["attempt 0", "attempt 1", "attempt 2"]
        assert "rule 5" in res.errors[0] and "fields must be exactly" in res.errors[1]
