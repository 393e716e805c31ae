"""The lab's SCVD annotator (written rules + candidate-state replay) and D_SC rows, on real lab
tasks in real sandboxes: each scripted behaviour gets the annotation its commands imply."""

from __future__ import annotations

import pytest

from agentpost.lab.episodes import scripted_episode
from agentpost.lab.tasks import write_family
from agentpost.lab.verify_rules import annotate_commands, reads, record, replay_to_candidate, writes
from agentpost.sandbox.registry import get_backend
from agentpost.scvd.records import from_dicts
from agentpost.tasks.loader import load_suite

BACKEND = get_backend("bwrap")
needs_bwrap = pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")


def test_writes_and_reads_tell_a_candidate_from_a_check():
    assert writes("grep -c 'x' a.log > count.txt", "count.txt")
    assert writes("awk '{print}' f.csv >> /app/count.txt", "count.txt")
    assert writes("sort f | tee count.txt", "count.txt")
    assert not writes("cat count.txt", "count.txt")
    assert not writes("grep -c x a.log > count.txt.bak", "count.txt")
    assert reads("cat count.txt", "count.txt")
    assert reads('test "$(cat count.txt)" -eq 3', "count.txt")
    assert not reads("cat other.txt", "count.txt")
    assert not reads("grep -c x a.log > count.txt", "count.txt")


def test_annotation_rules():
    cmds = ["ls", "grep -ci w a > o.txt", "cat o.txt", "grep -c w a > o.txt", "cat o.txt", "submit"]
    exits = [0, 0, 0, 0, 0, None]
    a = annotate_commands(cmds, exits, "o.txt", t_c=1)
    assert (a.I_v, a.z, a.check_turn) == (True, "error", 2)  # rewrote the candidate after it
    a = annotate_commands(
        ["grep -c w a > o.txt", "test -s o.txt", "submit"], [0, 1, None], "o.txt", 0
    )
    assert (a.I_v, a.z) == (True, "error")  # the check failed
    a = annotate_commands(["grep -c w a > o.txt", "cat o.txt", "submit"], [0, 0, None], "o.txt", 0)
    assert (a.I_v, a.z) == (True, "no-error")
    a = annotate_commands(["grep -c w a > o.txt", "submit", "cat o.txt"], [0, None, 0], "o.txt", 0)
    assert (a.I_v, a.z) == (False, None)  # nothing counts after submit
    assert annotate_commands(["ls", "submit"], [0, None], "o.txt", None).t_c is None


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    root = tmp_path_factory.mktemp("fam")
    doc = write_family(root, 5, 3, 0)
    outs = {t["id"]: t["params"]["out"] for t in doc["splits"]["train"]}
    return load_suite(root / "train"), outs


@needs_bwrap
def test_scripted_behaviours_get_the_annotation_their_commands_imply(tasks, tmp_path):
    from agentpost.lab.env import Memo

    memo = Memo(tmp_path / "memo.sqlite")
    suite, outs = tasks
    t = suite[0]
    want = {  # behaviour: (I_c, I_v, z, y_c, y_f)
        "careful": (True, True, "no-error", 1, 1),
        "direct": (True, False, None, None, 1),
        "hasty": (True, False, None, None, 0),
        "wrong-then-repaired": (True, True, "error", 0, 1),
    }
    rows = []
    for b, expected in want.items():
        ep = scripted_episode(t, b, BACKEND)
        r = record(t, ep, outs[t.id], BACKEND, model=b, run="r0")
        assert (r["I_c"], r["I_v"], r["z"], r["y_c"], r["y_f"]) == expected, b
        for _ in range(2):  # fills the memo, then answers from it: the sandbox's answers
            assert record(t, ep, outs[t.id], BACKEND, model=b, run="r0", memo=memo) == r, b
        rows.append(r)
    from_dicts(rows)  # every record is consistent (scvd.records rules)


@needs_bwrap
def test_d_sc_rows_mask_the_students_prefix_and_match_ftd_row_for_row(tasks, tmp_path):
    pytest.importorskip("transformers")
    from agentpost.lab.env import Memo
    from agentpost.lab.policy import train_tokenizer
    from agentpost.lab.scvd_data import _repaired, _scripted_rows, match, supervised_tokens

    suite, outs = tasks
    sc, pool = _scripted_rows(suite, outs, BACKEND, Memo(tmp_path / "memo.sqlite"))
    for row, t in zip(sc, suite, strict=True):
        context = [
            m["content"] for m in row.messages if m["role"] == "assistant" and not m["train"]
        ]
        trained = [m["content"] for m in row.messages if m["train"]]
        assert len(context) == 3 and context[2] != t.check  # ls, read, the wrong candidate
        assert trained[0] == t.check and trained[-1] == "submit" and len(trained) == 4
        assert _repaired(row)  # check, fix, check: the teacher rewrote the candidate
    texts = [str(m["content"]) for r in sc + [x for v in pool.values() for x in v]
             for m in r.messages]  # fmt: skip
    tok = train_tokenizer(texts * 3, 400)
    pool["nope"] = pool.pop(suite[0].id)  # no FTD row left for the first task
    kept, ftd = match(sc, pool, tok, 2048, tol=1.0)  # rows only: no token balancing
    assert [r.meta["task_id"] for r in kept] == [r.meta["task_id"] for r in ftd]
    assert [r.meta["task_id"] for r in kept] == [t.id for t in suite[1:]]
    assert all(n > 0 for n in supervised_tokens(kept + ftd, tok, 2048))
    assert all(m["train"] for r in ftd for m in r.messages if m["role"] == "assistant")
    from agentpost.lab.matching import imbalance

    loose = imbalance(*(sum(supervised_tokens(x, tok, 2048)) for x in (kept, ftd)))
    kept, ftd = match(sc, pool, tok, 2048)  # tokens too (lab.matching)
    assert [r.meta["task_id"] for r in kept] == [r.meta["task_id"] for r in ftd]
    tight = imbalance(*(sum(supervised_tokens(x, tok, 2048)) for x in (kept, ftd)))
    assert kept and (tight <= 0.01 or tight < loose), (loose, tight)


@needs_bwrap
def test_a_lab_rollout_cannot_read_the_answer_or_write_its_own_reward(tasks):
    from agentpost.lab.env import LabEnv

    suite, outs = tasks
    t = suite[0]
    expected = (t.path / "tests" / "expected.txt").read_text()
    with LabEnv(t, BACKEND) as env:
        obs, _ = env.step("cat /tests/expected.txt; find / -name expected.txt 2>/dev/null | head")
        assert expected.strip() not in obs.split("]", 1)[1]
        env.step("mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt")
        env.step("echo 1 > /tmp/reward.txt; echo 1 > $HOME/reward.txt")
        env.step("submit")
        assert env.resolved() is False  # no output file: a planted reward earns nothing
    with LabEnv(t, BACKEND) as env:  # the output a link to where the answer will be copied
        env.step(f"ln -s /tests/expected.txt /app/{outs[t.id]}; ln -s ../tests /app/t")
        env.step("submit")
        assert env.resolved() is False


@needs_bwrap
def test_a_replay_that_leaves_the_rollout_is_a_fault_not_a_record(tasks):
    """Candidate-state replay re-runs the rollout's commands: where one ends otherwise than in
    the rollout (here the recorded exit is made to differ, as a timeout under load would), the
    replayed state is not the policy's, so no record or SCVD row is made from it."""
    import dataclasses

    from agentpost.errors import InfraError

    suite, outs = tasks
    t = suite[2]
    ep = scripted_episode(t, "careful", BACKEND)
    ep = dataclasses.replace(ep, exits=[3, *ep.exits[1:]])
    with pytest.raises(InfraError, match="left the rollout at turn 0"):
        record(t, ep, outs[t.id], BACKEND, model="careful", run="r0")
    with pytest.raises(InfraError, match="left the rollout at turn 0"):
        replay_to_candidate(t, ep.commands, outs[t.id], BACKEND, ep.exits, memo=None)
