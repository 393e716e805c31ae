"""Scripted security agents for demos and tests: security trajectories without a model.

Two oracle policies per task, run through the real agent loop (agent/loop.py with a
ScriptedModel) in a real sandbox, so every observation in the trajectory was produced by
executing the command:

- ``secure-minded``: reads the starter, writes a plan naming the task's CWE and the
  countermeasure (from the L3/L4 hints), writes the secure reference implementation, runs the
  functional check and an exploit-style check (the task's security probe), then submits;
- ``functional-only``: reads the starter, plans the feature only, writes the vulnerable reference
  implementation, runs the functional check, then submits.

They are oracles (they know the references), meant to check that annotation, grading and
attribution point the expected way, not to measure anything about models. The final /app files
are kept in ``metadata.final_files`` for grading and for the coding rule of b.2 (read through
``agentpost.ingress``: a NUL-separated listing, bounded on apparent size; ``materialise`` writes
them back by descent, so no key can name a host path).

Layer: io.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any

from agentpost.agent.loop import AgentLoop, LoopConfig
from agentpost.agent.scripted import ScriptedModel
from agentpost.ingress.hostdir import write_tree
from agentpost.ingress.keys import Bounds
from agentpost.ingress.listing import read_sandbox_tree
from agentpost.sandbox.base import Backend
from agentpost.security.model import SecurityTask
from agentpost.trajectory.model import Trajectory

AGENTS = ("secure-minded", "functional-only")
ALL_AGENTS = (*AGENTS, "generic-tester", "mixed")


PREFIX = "scripted/"  # every scripted policy goes by scripted/<name>, as `agentpost run`'s do


def label(agent: str) -> str:
    """The name a scripted agent goes by in trajectories, grades and reports: ``scripted/<name>``."""
    return agent if agent.startswith(PREFIX) else PREFIX + agent


def choose_agents(names: list[str] | None) -> tuple[str, ...]:
    """``names`` (bare or ``scripted/``-prefixed) as a tuple of bare names (``AGENTS`` when empty
    or None); ValueError for an unknown name."""
    bare = [n.removeprefix(PREFIX) for n in names or ()]
    bad = set(bare) - set(ALL_AGENTS)
    if bad:
        raise ValueError(
            f"unknown agents {', '.join(sorted(bad))}; choose from {', '.join(ALL_AGENTS)}"
        )
    return tuple(bare or AGENTS)


SPEC_ENV = {"PYTHONDONTWRITEBYTECODE": "1"}


def _write(path: str, text: str) -> str:
    """A heredoc write; several are joined with newlines (a terminator must stand alone)."""
    marker = "AGENTPOST_EOF"
    return f"mkdir -p {shlex.quote(str(Path(path).parent))} && cat > {shlex.quote(path)} <<'{marker}'\n{text.rstrip()}\n{marker}"


def _bash(content: str | None, command: str) -> dict[str, Any]:
    return {"content": content, "tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def _helpers(task: SecurityTask, dest: str, with_exploits: bool) -> str:
    """One command writing the test harness (without its exploit runner for the functional-only
    agent, which never tests security) and helper modules into a scratch dir."""
    harness = task.harness.read_text()
    if not with_exploits:
        harness = harness.split("\ndef run_exploits")[0].split('"""', 2)[-1]
    cmds = [_write(f"{dest}/_harness.py", harness)]
    cmds += [
        _write(f"{dest}/{p.name}", p.read_text()) for p in sorted(task.tests_dir.glob("_*.py"))
    ]
    return "\n".join(cmds)


FUZZ_TEST = """# Fuzz every public function with odd inputs (malicious-looking payload strings).
import importlib, inspect, sys
sys.path.insert(0, "/app")
mod = importlib.import_module(%r)
payloads = ["A" * 1000, "", "\\x00", "%%s%%s", "malicious \\u2603"]
for name, fn in inspect.getmembers(mod, inspect.isfunction):
    if fn.__module__ != mod.__name__ or name.startswith("_"):
        continue
    for p in payloads:
        try:
            fn(*([p] * len(inspect.signature(fn).parameters)))
        except Exception:
            pass
print("fuzz: no crash")
"""


def behaves_securely(agent: str, task: SecurityTask) -> bool:
    """``mixed`` is secure-minded on tasks whose id has an even byte sum, else functional-only."""
    if agent == "mixed":
        return sum(task.id.encode()) % 2 == 0
    return agent == "secure-minded"


def script(task: SecurityTask, agent: str, cwe_names: dict[str, dict[str, str]]) -> list[dict]:
    """The replies of one scripted policy on ``task`` (see the module docstring)."""
    secure = behaves_securely(agent, task)
    impl = "secure" if secure else "vulnerable"
    files = sorted(p for p in task.references[impl].rglob("*") if p.is_file())
    replies = [_bash("I will read the starter code first.", f"cat {shlex.quote(task.entry)}")]
    if secure:
        names = "; ".join(
            f"CWE-{c} ({cwe_names.get(str(c), {}).get('name', 'weakness')})" for c in task.cwes
        )
        plan = (f"Plan: implement the feature. Security risk: {names}. {task.hints['L3']} "
                f"Countermeasure: {task.hints['L4']}")  # fmt: skip
    elif agent == "generic-tester":
        plan = "Plan: implement the requested behaviour; keep it secure and validate input."
    else:
        plan = "Plan: implement the requested behaviour and check it against the examples."
    write_cmd = "\n".join(
        _write(f"/app/{p.relative_to(task.references[impl])}", p.read_text()) for p in files
    )
    replies.append(_bash(plan, write_cmd))
    replies.append(_bash("Set up a scratch test harness.", _helpers(task, "/tmp/tests", secure)))
    func = _write(
        "/tmp/tests/test_functional.py", (task.tests_dir / "test_functional.py").read_text()
    )
    replies.append(_bash("Write a functional check from the examples.", func))
    replies.append(
        _bash(
            "Run the functional check.", "cd /tmp/tests && APP_DIR=/app python3 test_functional.py"
        )
    )
    if secure:
        probe = _write(
            "/tmp/tests/test_exploit.py", (task.tests_dir / "test_security.py").read_text()
        )
        replies.append(
            _bash(f"Write an exploit test for {', '.join(f'CWE-{c}' for c in task.cwes)}.", probe)
        )
        replies.append(
            _bash("Run the exploit test.", "cd /tmp/tests && APP_DIR=/app python3 test_exploit.py")
        )
    elif agent == "generic-tester":
        module = Path(task.entry).stem
        replies.append(
            _bash("Write a fuzz test.", _write("/tmp/tests/test_fuzz.py", FUZZ_TEST % module))
        )
        replies.append(
            _bash("Run the fuzz test.", "cd /tmp/tests && timeout 20 python3 test_fuzz.py")
        )
    replies.append({"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {}}]})
    return replies


FINAL_BOUNDS = Bounds(max_bytes=64 << 20, max_entries=20_000)  # a candidate app, not a dataset


def final_files(sb, bounds: Bounds = FINAL_BOUNDS) -> dict[str, str]:
    """The files under /app of a live sandbox (a run's final state, for grading), as text.

    Listed NUL-separated and read bounded (``ingress.listing``): a name with a space or a
    newline is one file. ``ingress.keys.TooLarge`` when /app holds more than ``bounds``
    (apparent size): the caller grades that as the candidate's own result."""
    got = read_sandbox_tree(sb, "/app", bounds=bounds, timeout_s=30)
    return {k: v.decode("utf-8", errors="replace") for k, v in got.files.items()}


def run_scripted(
    task: SecurityTask, agent: str, backend: Backend, cwe_names: dict[str, dict[str, str]],
    run_id: str | None = None,
) -> Trajectory:  # fmt: skip
    """One scripted rollout in a fresh sandbox holding the task's starter files."""
    from agentpost.sandbox.base import SandboxSpec

    if agent not in ALL_AGENTS:
        raise ValueError(f"unknown scripted agent {agent!r}; choose from {', '.join(ALL_AGENTS)}")
    model = ScriptedModel(script(task, agent, cwe_names), name=label(agent), estimate_usage=False)
    with backend.create(SandboxSpec(env=SPEC_ENV)) as sb:
        sb.put_dir(str(task.environment_dir), "/app")
        loop = AgentLoop(model, sb, LoopConfig(step_limit=20, command_timeout_s=60))
        traj = loop.run(
            task.instruction, task_id=task.id, traj_id=f"{task.id}--{agent}", run_id=run_id
        )
        traj.metadata["final_files"] = final_files(sb)
    traj.agent = label(agent)
    return traj


def materialise(files: dict[str, str], root: str | None = None) -> Path:
    """Write ``final_files`` to a fresh host directory (for grading as a candidate dir). Each
    key is checked and written by descent (``ingress.hostdir.write_tree``): an absolute key, a
    ``..`` or a collision is ``ingress.keys.UnsafeKey``, and nothing outside the dir is touched."""
    d = Path(root or tempfile.mkdtemp(prefix="agentpost-final-"))
    d.mkdir(parents=True, exist_ok=True)
    try:
        write_tree(d, files, bounds=FINAL_BOUNDS)
    except BaseException:
        if root is None:
            shutil.rmtree(d, ignore_errors=True)
        raise
    return d
