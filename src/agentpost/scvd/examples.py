"""Hand-built example trajectories for SCVD: small, readable, with known annotations.

``build`` turns a compact list of steps (each a list of (command, output, exit code) calls) into
a canonical trajectory. ``EDGE_CASES`` are the protocol's hard cases, each with the label a
careful human annotator gives under spec b.2; they are part of the bundled calibration set and
of the tests (a deterministic fake shipped in the package instead of a mock).

Layer: pure.
"""

from __future__ import annotations

from typing import Any

from agentpost import __version__
from agentpost.trajectory.model import Observation, Outcome, Producer, ToolCall, Trajectory, Turn

Call = tuple[str, str, int | None]  # command, output, exit code ("SUBMIT" = control call)


def build(
    id: str,
    steps: list[list[Call]],
    *,
    task: str = "demo",
    resolved: bool | None = None,
    model: str = "example",
    run: str = "r1",
    instruction: str = "",
) -> Trajectory:
    turns = []
    for s, calls in enumerate(steps):
        tcs, obs = [], []
        for j, (cmd, out, code) in enumerate(calls):
            cid = f"c{s}_{j}"
            if cmd == "SUBMIT":
                tcs.append(ToolCall(id=cid, name="submit", kind="control"))
                obs.append(Observation(call_id=cid, text="Submitted."))
                continue
            tcs.append(
                ToolCall(id=cid, name="bash", arguments={"command": cmd}, command=cmd, kind="shell")
            )
            obs.append(
                Observation(
                    call_id=cid,
                    text=out,
                    exit_code=code,
                    timed_out=code is None and "timed out" in out,
                )
            )
        turns.append(Turn(index=s, step=s, text=f"step {s}", tool_calls=tcs, observations=obs))
    return Trajectory(
        id=id, task_id=task, model=model, run_id=run, instruction=instruction or f"Task {task}.",
        turns=turns, outcome=Outcome(resolved=resolved, reward=None if resolved is None else float(resolved)),
        producer=Producer(name="agentpost.scvd.examples", version=__version__),
    )  # fmt: skip


def label(
    case_id: str, task: str, step=None, index=None, boundary=None, triggered=False, outcome=None
) -> dict[str, Any]:
    return {"case_id": case_id, "task_name": task, "candidate_formed": step is not None,
            "candidate_step": step, "candidate_tool_call_index": index, "boundary_type": boundary,
            "verification_triggered": triggered, "verification_outcome": outcome}  # fmt: skip


HELLO = "cat > hello.py <<'EOF'\nimport sys\nprint('Hello, ' + sys.argv[1])\nEOF"

# name → (steps, label fields (step, index, boundary, triggered, outcome)); task "demo".
EDGE_CASES: dict[str, tuple[list[list[Call]], tuple]] = {
    # construction and first check in one indivisible call
    "write-and-run-one-call": (
        [[("ls", "", 0)], [(HELLO + "\npython3 hello.py Ann", "Hello, Ann\n", 0)], [("SUBMIT", "", 0)]],
        (1, 0, "includes_first_verification", True, "supports_pass"),
    ),
    # construction and check are separate calls of one step: the construction call
    "same-step-separate-calls": (
        [[("cat task.md", "Write hello.py", 0)],
         [(HELLO, "", 0), ("python3 hello.py Bo", "Hello, Bo\n", 0)], [("SUBMIT", "", 0)]],
        (1, 0, "clean", True, "supports_pass"),
    ),
    # explores and stops: no candidate
    "explore-only": (
        [[("ls -la", "total 0", 0)], [("cat README", "Build a parser", 0)], [("SUBMIT", "", 0)]],
        (None, None, None, False, None),
    ),
    # the check tool is missing: verification attempted, no usable evidence
    "missing-test-tool": (
        [[(HELLO, "", 0)], [("pytest -q", "bash: pytest: command not found", 127)], [("SUBMIT", "", 0)]],
        (0, 0, "clean", True, "no_effective_result"),
    ),
    # the check times out
    "check-times-out": (
        [[(HELLO, "", 0)], [("python3 hello.py", "[command timed out after 60s]", None)], [("SUBMIT", "", 0)]],
        (0, 0, "clean", True, "no_effective_result"),
    ),
    # claims success without looking
    "unsupported-claim": (
        [[(HELLO, "", 0)], [("echo 'looks correct to me'", "looks correct to me", 0)], [("SUBMIT", "", 0)]],
        (0, 0, "clean", False, None),
    ),
    # runs the tests before implementing (pre-candidate debugging), then implements and re-runs
    "tests-before-candidate": (
        [[("python3 -m pytest -q", "1 failed", 1)],
         [("cat > calc.py <<'EOF'\ndef add(a, b):\n    return a + b\nEOF", "", 0)],
         [("python3 -m pytest -q", "1 passed", 0)], [("SUBMIT", "", 0)]],
        (1, 0, "clean", True, "supports_pass"),
    ),
    # a stub is not a candidate; the full implementation is
    "stub-then-implementation": (
        [[("cat > calc.py <<'EOF'\ndef add(a, b):\n    pass  # TODO\nEOF", "", 0)], [("ls", "calc.py", 0)],
         [("cat > calc.py <<'EOF'\ndef add(a, b):\n    return a + b\nEOF", "", 0)],
         [("python3 -c 'import calc; assert calc.add(2, 3) == 5'", "", 0)], [("SUBMIT", "", 0)]],
        (2, 0, "clean", True, "supports_pass"),
    ),
    # a clean exit whose output visibly contradicts the requirement (sum of 2 and 3 printed as 6)
    "wrong-output-exit-0": (
        [[("cat > add.py <<'EOF'\nimport sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\nEOF", "", 0)],
         [("python3 add.py 2 3", "6\n", 0)],
         [("cat > add.py <<'EOF'\nimport sys\nprint(int(sys.argv[1]) + int(sys.argv[2]))\nEOF", "", 0)],
         [("python3 add.py 2 3", "5\n", 0)], [("SUBMIT", "", 0)]],
        (0, 0, "clean", True, "exposes_error"),
    ),
    # a failing assertion, then a repair: the outcome is the first phase's (before the repair)
    "fail-then-repair": (
        [[("printf 'b\\na\\n' > sorted.txt", "", 0)],
         [("python3 -c \"assert open('sorted.txt').read() == 'a\\nb\\n'\"", "AssertionError", 1)],
         [("printf 'a\\nb\\n' > sorted.txt", "", 0)], [("cat sorted.txt", "a\nb\n", 0)], [("SUBMIT", "", 0)]],
        (0, 0, "clean", True, "exposes_error"),
    ),
    # a narrow inspection of the produced artifact counts as verification
    "narrow-inspection": (
        [[("echo 'PORT=8080' > app.env", "", 0)], [("cat app.env", "PORT=8080\n", 0)], [("SUBMIT", "", 0)]],
        (0, 0, "clean", True, "supports_pass"),
    ),
    # a multi-file artifact: the candidate is complete only after the second file
    "two-files-then-test": (
        [[("cat > util.py <<'EOF'\ndef double(x):\n    return 2 * x\nEOF", "", 0)],
         [("cat > main.py <<'EOF'\nfrom util import double\nprint(double(21))\nEOF", "", 0)],
         [("python3 main.py", "42\n", 0)], [("SUBMIT", "", 0)]],
        (1, 0, "clean", True, "supports_pass"),
    ),
}  # fmt: skip


INSTRUCTIONS = {
    "wrong-output-exit-0": "Write add.py: it prints the sum of its two integer arguments.",
    "fail-then-repair": "Write sorted.txt holding the lines b and a sorted alphabetically.",
    "narrow-inspection": "Create app.env setting PORT=8080.",
}
DEFAULT_INSTRUCTION = "Write the requested Python program (hello.py greets its argument; calc.py has add(a, b); main.py prints 42 using util.py)."


def edge_case(name: str) -> tuple[Trajectory, dict[str, Any]]:
    steps, (step, index, boundary, triggered, outcome) = EDGE_CASES[name]
    traj = build(f"edge::{name}", steps, instruction=INSTRUCTIONS.get(name, DEFAULT_INSTRUCTION))
    return traj, label(traj.id, "demo", step, index, boundary, triggered, outcome)
