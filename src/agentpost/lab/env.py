"""A lab task as an RL environment: one sandbox per rollout, one shell command per turn.

``LabEnv`` satisfies ``train.trl_hero.Environment`` (``step``, ``resolved``, ``close``), so the
same object serves scripted rollouts (the SFT corpus), evaluation of a trained policy and RL
rollouts inside TRL. Commands run from the task's work directory with a short timeout; the
task's hidden evaluator grades the final state once (``resolved``), after the agent's last
command, exactly as ``agentpost run`` grades a rollout.

``Memo`` (optional) makes thousands of rollouts affordable on 2 cores: a history made only of
the task's own scripted commands (its ``explore`` views, oracle, wrong candidate and check, all
fixed shell commands over the task's own files, with no clock, randomness or process ids in
their output) has one answer, so the answer a real sandbox gave for ``(task, commands so far)``
is stored (``Store``, SQLite, shared by processes) and given again. A history the memo has not
seen runs in a real sandbox: the rollout goes live (its history so far replayed, each replayed
exit checked against the recorded one), and every answer it then gets while its history stays
all-scripted is stored. A rollout that sends any other command goes live the same way and
stays live. The grade of an all-scripted
history is memoised the same way; every other grade is the evaluator on the live sandbox. A
memo answer that came from a timed-out or killed command is never stored (an ``InfraError``:
a fault of the loaded machine, not the policy's). ``tests/lab/test_lab_env.py`` checks memo
answers against fresh sandboxes for every scripted behaviour.

Layer: io.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from agentpost.errors import InfraError
from agentpost.lab.plans import task_plans
from agentpost.lab.transcript import SUBMIT, observation
from agentpost.sandbox.base import Backend, ExecResult
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.model import Task

COMMAND_TIMEOUT_S = 5.0
MEMO_OUTPUT_CHARS = 2000  # more than any observation shows (``transcript.OBS_CHARS``)


def scripted_commands(task: Task) -> frozenset[str]:
    """The task's own fixed commands: its explore views, oracle, wrong candidate and check."""
    return frozenset(c for plan in task_plans(task).values() for c in plan if c != SUBMIT)


def task_digest(task: Task) -> str:
    """SHA-256 over the task directory's files (names and bytes): the memo's task key."""
    h = hashlib.sha256()
    root = Path(task.path)
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


class Memo:
    """Answers of all-scripted histories, in a ``Store`` at ``path`` (see the module doc)."""

    def __init__(self, path: str | Path):
        from agentpost.store import Store

        self.store = Store(path)
        self._tasks: dict[str, tuple[str, frozenset[str]]] = {}
        self.hits = self.misses = 0

    def task(self, task: Task) -> tuple[str, frozenset[str]]:
        key = str(task.path)
        if key not in self._tasks:
            self._tasks[key] = (task_digest(task), scripted_commands(task))
        return self._tasks[key]

    def _key(self, kind: str, task: Task, history: list[str]) -> str:
        from agentpost.store import key

        return key(kind, {"task": self.task(task)[0], "commands": history})

    def get(self, kind: str, task: Task, history: list[str]) -> Any:
        got = self.store.get(self._key(kind, task, history))
        if got is None:
            self.misses += 1
        else:
            self.hits += 1
        return got

    def put(self, kind: str, task: Task, history: list[str], value: Any) -> None:
        self.store.put(self._key(kind, task, history), value)


class LabEnv:
    def __init__(self, task: Task, backend: Backend, memo: Memo | None = None):
        self.task = task
        self.backend = backend
        self.memo = memo
        self.box: Any = None
        self.commands: list[str] = []
        self.exits: list[int | None] = []
        self._resolved: bool | None = None
        self._scripted = memo.task(task)[1] if memo is not None else frozenset()
        self.pure = memo is not None  # every command so far is one of the task's scripted ones
        if memo is None:
            self._open()

    def _open(self) -> None:
        self.box = self.backend.create(spec_for(self.task, backend=self.backend))
        prepare(self.task, self.box)

    def _exec(self, command: str, *, strict: bool = False) -> ExecResult:
        if self.box is None:
            self._open()
        res = self.box.exec(command or "true", cwd=self.task.workdir, timeout_s=COMMAND_TIMEOUT_S)
        if strict and (res.timed_out or res.killed):
            raise InfraError(f"{self.task.id}: command {command!r} (scripted or ours) did not "
                             f"finish (timed out {res.timed_out}, killed {res.killed})")  # fmt: skip
        return res

    def _live(self) -> None:
        """Open the sandbox and replay the history so far into it (only ever an all-scripted
        history: a rollout goes live at its first other command and stays live)."""
        if self.box is not None:
            return
        self._open()
        for i, (cmd, code) in enumerate(zip(self.commands, self.exits, strict=True)):
            if "\0" in cmd or cmd == SUBMIT:  # never run (see ``step``)
                continue
            res = self._exec(cmd, strict=True)
            if res.exit_code != code:
                raise InfraError(f"{self.task.id}: replaying turn {i} ({cmd!r}) gave exit "
                                 f"{res.exit_code}, the memo {code}")  # fmt: skip

    def _answer(self, command: str) -> tuple[int, str]:
        """A scripted command or probe on an all-scripted history: the memo's answer, else the
        live sandbox's (then stored)."""
        assert self.memo is not None and self.pure
        history = [*self.commands, command]
        if self.box is None:
            got = self.memo.get("lab-answer", self.task, history)
            if got is not None:
                return int(got[0]), str(got[1])
        self._live()
        res = self._exec(command, strict=True)
        out = (res.stdout + res.stderr)[:MEMO_OUTPUT_CHARS]
        self.memo.put("lab-answer", self.task, history, [res.exit_code, out])
        return res.exit_code, out

    def step(self, action: str) -> tuple[str, bool]:
        command = action.strip()
        if command == SUBMIT:
            self.commands.append(command)
            self.exits.append(None)
            return "", True
        if self.pure and command in self._scripted:
            code, out = self._answer(command)
        elif "\0" in command:  # a sampled NUL byte: no shell can take it; the agent's failure
            self._live()  # (the grade is then the evaluator's on the live sandbox)
            self.pure = False
            code, out = 127, "bash: the command contains a NUL byte"
        else:
            self._live()
            self.pure = False
            res = self._exec(command)
            code, out = res.exit_code, res.stdout + res.stderr
        self.commands.append(command)
        self.exits.append(code)
        return observation(code, out), False

    def look(self, command: str) -> tuple[int, str]:
        """(exit, output) of one of *our* read-only probes (``test -f OUT``, the task's check) on
        the current state, not recorded in the history. It runs strictly: a probe that times
        out or is killed is an ``InfraError``, never an answer."""
        if self.pure:
            return self._answer(command)
        self._live()
        res = self._exec(command, strict=True)
        return res.exit_code, res.stdout + res.stderr

    def resolved(self) -> bool:
        """The hidden evaluator's verdict. An evaluator that gave no verdict (``status`` other
        than ok) is an infrastructure fault, raised, never recorded as the policy's failure."""
        if self._resolved is None:
            done = [c for c in self.commands if c != SUBMIT]
            if self.pure and self.box is None:
                got = self.memo.get("lab-grade", self.task, done)  # type: ignore[union-attr]
                if got is not None:
                    self._resolved = bool(got)
                    return self._resolved
            self._live()
            ev = evaluate(self.task, self.box)
            if ev.status != "ok":
                raise InfraError(f"{self.task.id}: evaluator {ev.status}: {ev.output[-300:]}")
            self._resolved = bool(ev.resolved)
            if self.pure:
                self.memo.put("lab-grade", self.task, done, self._resolved)  # type: ignore[union-attr]
        return self._resolved

    def close(self) -> None:
        if self.box is not None:
            self.box.close()
            self.box = None

    def __enter__(self) -> LabEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
