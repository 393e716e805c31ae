"""The offline heuristic annotator and the shell reader under it."""

from __future__ import annotations

import pytest

from agentpost.scvd import shell
from agentpost.scvd.examples import EDGE_CASES, build, edge_case
from agentpost.scvd.heuristic import VARIANTS, annotate
from agentpost.scvd.protocol import consistency_errors
from agentpost.scvd.records import Annotation


@pytest.mark.parametrize(
    "cmd, kinds",
    [
        ("cat > a.py <<'EOF'\nx = 1; y = 2\nEOF\npython3 a.py", ["modify", "run"]),
        ('python3 -c "import json; print(1 > 2)"', ["run"]),
        ("sort in.txt > out.txt && cat out.txt", ["modify", "inspect"]),
        ('mkdir -p "/tmp/t/x y" && echo 1 > "/tmp/t/a b"', ["other", "other"]),  # scratch writes
        ("ls 2>/dev/null | head -3", ["inspect"]),
        ("sed -i 's/a/b/' f.txt", ["modify"]),
        ("git checkout -b feature", ["modify"]),
        ("git log --oneline", ["inspect"]),
        ("gcc -o prog prog.c && ./prog 3", ["run", "run"]),  # compiling is a check (b.2)
        ("python3 - <<'EOF'\nopen('o.json', 'w').write('{}')\nEOF", ["modify"]),
    ],
)
def test_shell_segments_and_kinds(cmd, kinds) -> None:
    assert [shell.classify_segment(s) for s in shell.split_segments(cmd)] == kinds


def test_running_a_recorded_script_is_judged_by_its_body() -> None:
    scripts: dict[str, str] = {}
    writer = "cat > /tmp/s/solve.sh <<'X'\ncd /app\nawk '{print $1}' log > top.txt\nX"
    (seg,) = shell.split_segments(writer)
    assert shell.classify_segment(seg, scripts) == "other"  # writing under /tmp is scratch
    scripts.update(shell.heredoc_files(seg))
    assert shell.classify_segment("bash /tmp/s/solve.sh", scripts) == "modify"
    assert shell.written_paths("bash /tmp/s/solve.sh", scripts) == ["top.txt"]
    scripts["/tmp/s/check.sh"] = "grep -c x top.txt"
    assert shell.classify_segment("bash /tmp/s/check.sh", scripts) == "run"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_heuristic_annotations_always_satisfy_the_rules(name, variant) -> None:
    traj, _ = edge_case(name)
    assert consistency_errors(annotate(traj, traj.id, variant), traj) == []


def test_heuristic_on_clear_cases() -> None:
    for name in ("fail-then-repair", "same-step-separate-calls", "write-and-run-one-call",
                 "missing-test-tool", "explore-only", "unsupported-claim"):  # fmt: skip
        traj, lab = edge_case(name)
        got = annotate(traj, traj.id, "artifact")
        assert got == Annotation.from_json(lab), name


def test_known_limit_wrong_output_with_exit_0_reads_as_pass() -> None:
    traj, lab = edge_case("wrong-output-exit-0")
    assert lab["verification_outcome"] == "exposes_error"
    assert annotate(traj, traj.id, "artifact").verification_outcome == "supports_pass"


def test_variants_differ_in_what_counts_as_a_check() -> None:
    traj, _ = edge_case("narrow-inspection")
    assert annotate(traj, traj.id, "artifact").verification_triggered is True
    assert annotate(traj, traj.id, "run").verification_triggered is False
    traj, _ = edge_case("stub-then-implementation")
    assert annotate(traj, traj.id, "broad").candidate_step == 0  # the stub + ls
    assert annotate(traj, traj.id, "artifact").candidate_step == 2


def test_submit_before_any_check_means_no_verification() -> None:
    traj = build(
        "x", [[("echo hi > out.txt", "", 0), ("SUBMIT", "", 0)], [("cat out.txt", "hi", 0)]]
    )
    got = annotate(traj, "x", "broad")
    assert (got.candidate_step, got.candidate_tool_call_index) == (0, 0)
    assert (
        got.verification_triggered is True
    )  # a later check still counts (b.2: after the candidate)
