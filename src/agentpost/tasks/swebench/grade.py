"""Grade an instance like SWE-bench's harness: the candidate's diff, applied to a fresh container
of the instance image, the harness's eval script, its log parser, its ``report.json``.

``evaluate_instance(task, sandbox)`` is ``tasks.evaluate.evaluate`` for a SWE-bench task. The
candidate is what the agent left in ``/testbed``: every change against the image's set-up commit,
new files included (but not what the install left untracked), read with a throwaway index (``git add -A`` as mini-swe-agent and SWE-agent
submit, the agent's own index untouched). ``grade_patch`` then does what ``run_instance`` does: a
fresh sandbox from the image, the patch at ``/tmp/patch.diff`` tried with the harness's
``GIT_APPLY_CMDS`` in order, the eval script run with its output and trace interleaved (``2>&1``,
as ``docker exec`` returns them), and ``get_eval_report`` on that output. Resolved iff every
FAIL_TO_PASS and PASS_TO_PASS test passes.

Departures: the eval script runs from ``/tmp/eval.sh`` (the image root is read-only), and a patch
that applies with none of the commands is graded 0 with the harness's report for it
(``patch_successfully_applied`` false) where the harness writes no report. An empty candidate is
graded (the no-patch run of the gold gate), where the harness skips empty predictions.

Layer: io.
"""

from __future__ import annotations

import shlex
from typing import Any

from agentpost.errors import InfraError
from agentpost.sandbox.base import ExecResult, Sandbox
from agentpost.tasks.model import EvalResult, Task
from agentpost.tasks.swebench import harness
from agentpost.tasks.swebench.image import BUILT, SETUP_COMMIT
from agentpost.tasks.swebench.instance import instance_of

OUTPUT_CHARS = 8000
PATCH_FILE = "/tmp/patch.diff"
EVAL_FILE = "/tmp/eval.sh"
_DIFF = (
    'set -e; idx=$(mktemp); ps=$(mktemp); trap \'rm -f "$idx" "$ps"\' EXIT; base=$(cat {setup}); '
    '{{ echo .; sed -e "s|/$||" -e "s|^|:(exclude,literal)|" {built}; }} > "$ps"; '
    'export GIT_INDEX_FILE="$idx"; git read-tree "$base"; git add -A --pathspec-from-file="$ps"; '
    'git -c core.fileMode=false diff --cached --binary "$base"'
)


def apply_commands() -> list[str]:
    from swebench.harness.run_evaluation import GIT_APPLY_CMDS

    return list(GIT_APPLY_CMDS)


def candidate_patch(task: Task, sandbox: Sandbox) -> str:
    """The agent's changes to ``/testbed`` as one diff (the harness's ``model_patch``)."""
    res = sandbox.exec(["bash", "-c", _DIFF.format(setup=shlex.quote(SETUP_COMMIT), built=shlex.quote(BUILT))],
                       cwd=task.workdir, timeout_s=300, user="0")  # fmt: skip
    if res.exit_code != 0 or res.timed_out:
        raise _AgentState(
            f"cannot read the candidate's diff (exit {res.exit_code}): {res.stderr[-400:]}"
        )
    if res.truncated:
        raise _AgentState("the candidate's diff is larger than the sandbox's output cap")
    return res.stdout


class _AgentState(Exception):
    """The agent's repository cannot give a diff: the agent's doing, graded 0."""


def evaluate_instance(task: Task, sandbox: Sandbox) -> EvalResult:
    backend = getattr(sandbox, "backend", None)
    if getattr(backend, "name", None) != "docker" or not sandbox.spec.image:
        return EvalResult(
            "infra_error", None, None, f"{task.id}: SWE-bench tasks need the docker backend"
        )
    try:
        patch = candidate_patch(task, sandbox)
    except _AgentState as e:
        return EvalResult("ok", 0.0, False, str(e), {"patch": None})
    return grade_patch(task, backend, patch)


def _tail(text: str) -> str:
    return text if len(text) <= OUTPUT_CHARS else "[...truncated...]\n" + text[-OUTPUT_CHARS:]


def grade_patch(task: Task, backend, patch: str, image: str | None = None) -> EvalResult:
    """Grade ``patch`` on a fresh container of the instance's image (``image``: that tag, else
    the task's image is built or found)."""
    from agentpost.tasks.evaluate import spec_for

    inst = instance_of(task)
    spec = spec_for(task, backend=backend, **({"image": image} if image else {}))
    try:
        with backend.create(spec) as sb:
            applied, apply_log = _apply(sb, task, patch)
            if not applied:
                report = {inst.instance_id: {"patch_is_None": False, "patch_exists": True,
                          "patch_successfully_applied": False, "resolved": False}}  # fmt: skip
                return EvalResult("ok", 0.0, False, _tail(apply_log),
                                  {"report": report, "patch": patch})  # fmt: skip
            script = harness.eval_script(inst, task.metadata["spec"])
            sb.put(EVAL_FILE, script.encode(), 0o755)
            res = sb.exec(["/bin/bash", "-c", f"/bin/bash {EVAL_FILE} 2>&1"], cwd=task.workdir,
                          timeout_s=task.verifier_timeout_s, user="0")  # fmt: skip
    except InfraError:
        raise
    return _result(inst, res, patch, apply_log)


def _apply(sb: Sandbox, task: Task, patch: str) -> tuple[bool, str]:
    if not patch.strip():
        return True, "(empty patch: nothing applied)"
    sb.put(PATCH_FILE, patch.encode(), 0o644)
    out = ""
    for cmd in apply_commands():
        r = sb.exec(f"{cmd} {PATCH_FILE}", cwd=task.workdir, timeout_s=300, user="0")
        out = r.stdout + r.stderr
        if r.exit_code == 0:
            return True, f"{harness.markers()['apply_pass']}:\n{out}"
    return False, f"{harness.markers()['apply_fail']}:\n{out}"


def _result(inst, res: ExecResult, patch: str, apply_log: str) -> EvalResult:
    details: dict[str, Any] = {"exit_code": res.exit_code, "duration_s": round(res.duration_s, 3),
                               "patch": patch, "apply": apply_log[-2000:]}  # fmt: skip
    if res.timed_out:
        return EvalResult("timeout", None, None, _tail(res.stdout), details)
    if res.truncated:
        details["truncated"] = True
    report = harness.report(inst, res.stdout, patch)
    details["report"] = report
    resolved = bool(report[inst.instance_id]["resolved"])
    return EvalResult("ok", 1.0 if resolved else 0.0, resolved, _tail(res.stdout), details)
