"""The one judge call path (``judges.ask``), seen from no method: a check and a re-ask message of
the test's own, every failure class of a judge, and the heuristic seat that each method fills
with its own annotator (SCVD: a variant of its heuristic; SecureVibe: its pre-label heuristic).
The judge kinds of a panel config go through the one component loader, paths included."""

from __future__ import annotations

import json

import pytest

from agentpost.errors import BudgetExceeded, InputError, JudgeError
from agentpost.judges.ask import ask_judge, fill_seats, messages_key
from agentpost.judges.base import HeuristicSeat, JudgeReply
from agentpost.judges.config import DEFAULT_CONFIG, build_panel
from agentpost.judges.scripted import ScriptedJudge
from agentpost.scvd.examples import edge_case
from agentpost.scvd.judging import HeuristicJudge, annotate_one, scvd_judges
from agentpost.security.judging import panel_annotate
from agentpost.security.suite import MARKERS, load_data

TRAJ, _ = edge_case("fail-then-repair")
Q = [{"role": "user", "content": "a number, please"}]


def number(raw: str):
    """The test method's parser: an integer answer, else its error."""
    return (int(raw), []) if raw.strip().isdigit() else (None, [f"{raw!r} is not a number"])


def again(errors: list[str]) -> dict:
    return {"role": "user", "content": "invalid: " + "; ".join(errors)}


class Raising:
    """A judge whose calls raise the given errors in turn, then answer ``7``."""

    def __init__(self, *errors: Exception):
        self.id, self.errors, self.seen = "r", list(errors), []
        self.fingerprint = {"kind": "raising"}

    def ask(self, messages, traj, case_id):
        self.seen.append(messages)
        if self.errors:
            raise self.errors.pop(0)
        return JudgeReply("7", {"input_tokens": 3, "cost_usd": 0.5})


def test_an_invalid_answer_is_reasked_with_the_methods_message() -> None:
    seen = []
    judge = ScriptedJudge("s", lambda m, c: (seen.append(m), "seven" if len(seen) == 1 else "7")[1])
    res = ask_judge(judge, Q, TRAJ, "c", number, again)
    assert (res.status, res.answer, res.attempts) == ("valid", 7, 2)
    assert res.raw == ["seven", "7"] and res.errors == ["attempt 0: 'seven' is not a number"]
    assert seen[1][-2:] == [{"role": "assistant", "content": "seven"},
                            {"role": "user", "content": "invalid: 'seven' is not a number"}]  # fmt: skip
    assert res.request_keys == [messages_key(seen[0]), messages_key(seen[1])]


def test_after_the_reasks_the_judge_abstains_keeping_everything() -> None:
    res = ask_judge(ScriptedJudge("s", ["a", "b", "c", "7"]), Q, TRAJ, "c", number, again)
    assert res.status == "abstained" and res.answer is None
    assert res.raw == ["a", "b", "c"] and len(res.errors) == 3 == len(set(res.request_keys))
    one = ask_judge(ScriptedJudge("s", ["a", "7"]), Q, TRAJ, "c", number, again, max_reasks=0)
    assert one.status == "abstained" and one.attempts == 1


def test_a_malformed_body_asks_the_same_question_again() -> None:
    judge = Raising(JudgeError("broken body"))
    res = ask_judge(judge, Q, TRAJ, "c", number, again)
    assert res.status == "valid" and res.raw == [None, "7"] and judge.seen[0] == judge.seen[1]
    assert "malformed response: broken body" in res.errors[0]
    assert res.usage == {"input_tokens": 3, "cost_usd": 0.5}


def test_a_spent_budget_and_an_endpoint_failure_are_not_abstentions() -> None:
    res = ask_judge(Raising(BudgetExceeded("tokens")), Q, TRAJ, "c", number, again)
    assert (res.status, res.attempts, res.request_keys) == ("budget", 0, [])
    from agentpost.agent.llm import ModelUnavailable

    res = ask_judge(Raising(ModelUnavailable("down")), Q, TRAJ, "c", number, again)
    assert res.status == "infra_error" and "ModelUnavailable" in res.errors[0]


def test_config_kinds_go_through_the_loader_paths_included() -> None:
    path = {"id": "p", "kind": "agentpost.judges.config:heuristic_seat", "variant": "run"}
    panel = build_panel({"judges": [path, *DEFAULT_CONFIG["judges"][1:]]})
    assert isinstance(panel.judges[0], HeuristicSeat) and panel.judges[0].variant == "run"
    for kind, message in [("nope", "choose from heuristic, openai, recorded"),
                          ("no_such_mod:f", "cannot load judge kind"),
                          ("agentpost.judges.config:JUDGE_KINDS", "names no factory"),
                          ("json:dumps", "names no factory")]:  # fmt: skip
        with pytest.raises(InputError, match=message) as e:
            build_panel({"judges": [{"id": "x", "kind": kind}]}, "j.yaml")
        assert "$.judges[0].kind" in str(e.value)
    with pytest.raises(InputError, match="needs 'path'"):
        build_panel({"judges": [{"id": "x", "kind": "recorded"}]}, "j.yaml")


def test_scvd_fills_heuristic_seats_with_its_variants() -> None:
    panel = build_panel(DEFAULT_CONFIG)
    assert all(isinstance(j, HeuristicSeat) for j in panel.judges) and panel.heuristic_only
    with pytest.raises(TypeError, match="filled by the method"):
        panel.judges[0].ask(Q, TRAJ, "c")
    filled = scvd_judges(panel.judges)
    assert [type(j) for j in filled] == [HeuristicJudge] * 3
    assert [j.variant for j in filled] == ["changes", "commands", "narration"]
    assert "version" in filled[0].fingerprint  # the store key changes with the heuristic
    res = annotate_one(panel.judges[1], TRAJ, TRAJ.id)  # a seat given directly is filled too
    assert res.status == "valid" and res.annotation.z == "error"
    bad = build_panel({"judges": [{"id": "b", "kind": "heuristic", "variant": "nope"},
                                  *DEFAULT_CONFIG["judges"][1:]]}, "j.yaml")  # fmt: skip
    with pytest.raises(InputError, match=r"j.yaml.*\$\.judges\[0\]\.variant"):
        scvd_judges(bad.judges)


def test_securevibe_fills_the_same_seats_with_its_own_heuristic() -> None:
    """The default config's seats answer in SecureVibe's schema on a SecureVibe case (before,
    the swap keyed on a fingerprint string; now the seat says what it is)."""
    panel = build_panel(DEFAULT_CONFIG)
    out = panel_annotate(panel.judges, panel.arbiter, TRAJ, task_text="x",
                         reference={"cwes": [89]}, final_diff="", final_code="",
                         markers=load_data(MARKERS))  # fmt: skip
    assert [r["status"] for r in out["judges"]] == ["valid"] * 3
    assert all(set(json.loads(r["raw"][0])) >= {"planning", "coding"} for r in out["judges"])
    # what a recorded judge needs to replay them, one key per request, and their usage
    assert all(len(r["request_keys"]) == len(r["raw"]) == 1 for r in out["judges"])
    assert all("usage" in r for r in out["judges"])
    assert out["disagreements"] == [] and out["missing"] == []
    assert fill_seats([ScriptedJudge("s", [])], lambda s: 1 / 0)[0].id == "s"  # others stay
