"""The agent loop: a model, one bash tool, a sandbox, and a canonical trajectory.

Readable in one sitting, after mini-swe-agent. The conversation is a system prompt and the task
instruction; each step asks the model once, runs the actions it chose inside the sandbox (work
directory from the task) and feeds the observations back, truncated past a limit with a marker.

The action format (``LoopConfig.mode``: ``tools``, ``text``, or a ``module:Class`` path) is one
object, ``agent.formats.ActionFormat``: it says which tools the model gets, reads the actions
from each reply and renders what they did back into the conversation; the loop itself only runs
the actions. Its hooks are the public override points for a new format.

It stops on submit, the step limit, the cost limit, the wall-clock timeout (checked between
turns, so a running command may overrun it by up to ``command_timeout_s``; a model request is
cut at it, see below), a spent budget or a model error; ``metadata.exit_status`` says which.

Only what the model said ends a rollout as the agent's: an infrastructure fault (the transport's
``InfraError``: retries ran out on 5xx, timeouts, dropped connections or malformed bodies; the
wall-clock limit passing while the server has not answered; a stop request) and a refused
request (``ModelRequestError``, a wrong key or parameter) propagate, so the runner records an
error and writes nothing, and a rerun redoes the rollout. One refusal is the agent's: a 400 saying
the conversation is past the model's context length ends the rollout as ``context_exceeded``
(what the agent said and read outgrew the model, as SWE-agent's ``exit_context``). Each model call runs under
``llm.call_limits`` (the rollout's deadline and the runner's stop flag), which the transport
honours during the request; ``stop`` is also checked before every call and command. Every command runs in a fresh shell (one
``sandbox.exec`` each: no cwd or exports carry over), and ``metadata.shell_state = "fresh"``
tells replay so. The trajectory holds per-turn usage and
logprobs as the model returned them, exit codes and timeouts per call, model latency and exec
durations (``Turn.extra.exec_s``). With ``snapshot_dir`` set, the writable directories are
archived after every shell call (``Turn.extra.snapshots``: references relative to the run
directory, see ``sandbox/snapshot_store.py``, plus a line in the run's own manifest that binds
each archive to this trajectory, step and call), so any intermediate state can be graded later
without replay.

Layer: io.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from agentpost import __version__
from agentpost.agent.formats import FORMATS, get_format
from agentpost.agent.llm import (
    CallLimits,
    Completion,
    Interrupted,
    Model,
    ModelRequestError,
    call_limits,
)
from agentpost.config_checks import at_least, check, positive
from agentpost.errors import AgentpostError, BudgetExceeded, InfraError
from agentpost.sandbox import snapshot_store
from agentpost.sandbox.base import Sandbox
from agentpost.trajectory.model import (
    Observation,
    Producer,
    ToolCall,
    Trajectory,
    Turn,
    compute_totals,
)

SYSTEM_PROMPT = (
    "You are a careful software engineer working in a Linux shell. Solve the task by running "
    "commands; each command runs in a fresh shell in the work directory. Verify your work "
    "before you submit."
)
# A 400 that says the conversation no longer fits (vLLM, OpenAI, SGLang wordings).
_CONTEXT_FULL = re.compile(
    r"context length|context window|context_length_exceeded|too many tokens", re.I
)


@dataclass
class LoopConfig:
    mode: str = "tools"  # an action format: tools | text | package.module:Class
    step_limit: int = 50
    cost_limit_usd: float | None = None  # over turns' usage.cost_usd; an unknown cost counts 0
    timeout_s: float | None = None  # wall clock for the whole rollout
    command_timeout_s: float = 60.0
    observation_chars: int = 10_000
    snapshot_dir: str | None = None
    system_prompt: str = SYSTEM_PROMPT

    def __post_init__(self) -> None:
        """Reject a config that could only fail every turn (e.g. ``mode="txt"``), naming the
        field (``config_checks``); the CLI turns the ``ValueError`` into a one-line input error."""
        mode = f"an action format: {', '.join(sorted(FORMATS))} or a package.module:Class path"
        try:
            get_format(self.mode)
            mode_ok = True
        except ValueError as e:  # a path that does not load says why
            mode_ok, why = False, str(e)
            mode += "" if why.startswith("unknown action format") else f" ({why})"
        seconds = "a positive number of seconds (or unset)"
        check(self, {
            "mode": (mode_ok, mode),
            "step_limit": (at_least(self.step_limit, 1), "at least 1"),
            "cost_limit_usd": (self.cost_limit_usd is None or positive(self.cost_limit_usd),
                               "a positive number of USD (or unset)"),
            "timeout_s": (self.timeout_s is None or positive(self.timeout_s), seconds),
            "command_timeout_s": (positive(self.command_timeout_s), "a positive number of seconds"),
            "observation_chars": (at_least(self.observation_chars, 1), "at least 1"),
        })  # fmt: skip


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def truncate(text: str, limit: int) -> str:
    """``text`` if it fits, else its head and tail around a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters truncated ...]\n{text[-half:]}"


class AgentLoop:
    """One rollout of ``model`` on ``instruction`` inside ``sandbox``.

    Override points (public; a subclass may replace any of them):

    - ``format``: the ``ActionFormat`` (set from ``config.mode``): tools, parsing, rendering;
    - ``drive(messages, tools, turns, workdir, traj_id, t0)``: the step loop from any
      conversation (``run`` starts it from the task; SCVD's teacher continues a student's);
    - ``stop_reason(turns, t0)``: the limits checked before every model call;
    - ``act(comp, turn, messages, workdir, traj_id)``: one reply's actions and observations;
    - ``observe(call, turn, workdir, traj_id, j)``: one action's ``Observation`` (runs a shell
      call in the sandbox, answers a submit or an unknown tool).
    """

    def __init__(self, model: Model, sandbox: Sandbox, config: LoopConfig | None = None, stop=None):
        """``stop``: a ``threading.Event`` the runner sets to end the rollout early (it is then
        ``Interrupted``, not an outcome)."""
        self.model = model
        self.sandbox = sandbox
        self.config = config or LoopConfig()
        self.format = get_format(self.config.mode)
        self.stop = stop

    def _check_stop(self) -> None:
        if self.stop is not None and self.stop.is_set():
            raise Interrupted("stopped before the rollout finished")

    def run(
        self,
        instruction: str,
        *,
        workdir: str = "/app",
        task_id: str | None = None,
        traj_id: str | None = None,
        run_id: str | None = None,
    ) -> Trajectory:
        cfg = self.config
        traj_id = traj_id or uuid.uuid4().hex
        tools, guide = self.format.tools(), self.format.guide
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": cfg.system_prompt},
            {
                "role": "user",
                "content": f"{instruction.strip()}\n\nWork directory: {workdir}\n{guide}",
            },
        ]
        turns: list[Turn] = []
        t0 = time.monotonic()
        if cfg.snapshot_dir:  # a fresh attempt: the run's manifest forgets an earlier one
            snapshot_store.start(cfg.snapshot_dir, traj_id)
        status, error = self.drive(messages, tools, turns, workdir, traj_id, t0)
        traj = Trajectory(
            id=traj_id, task_id=task_id, agent="agentpost", agent_version=__version__,
            model=self.model.name, run_id=run_id, instruction=instruction,
            system_prompt=cfg.system_prompt, turns=turns, totals=compute_totals(turns),
            producer=Producer(name="agentpost.agent.loop", version=__version__, args=asdict(cfg)),
            metadata={"exit_status": status, "mode": cfg.mode, "workdir": workdir,
                      "shell_state": "fresh", "elapsed_s": round(time.monotonic() - t0, 3)},
        )  # fmt: skip
        if error:
            traj.metadata["error"] = error
        return traj

    def stop_reason(self, turns: list[Turn], t0: float) -> str | None:
        cfg = self.config
        if len(turns) >= cfg.step_limit:
            return "step_limit"
        if cfg.timeout_s is not None and time.monotonic() - t0 >= cfg.timeout_s:
            return "timeout"
        if cfg.cost_limit_usd is not None:
            spent = sum(t.usage.cost_usd or 0.0 for t in turns if t.usage)
            if spent >= cfg.cost_limit_usd:
                return "cost_limit"
        return None

    def drive(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        turns: list[Turn],
        workdir: str,
        traj_id: str,
        t0: float,
    ) -> tuple[str, str | None]:
        """Step until a stop, appending to ``messages`` and ``turns``; returns (exit status,
        error message or None). Infrastructure errors propagate: the runner retries the
        rollout."""
        cfg = self.config
        deadline = None if cfg.timeout_s is None else t0 + cfg.timeout_s
        while True:
            stop = self.stop_reason(turns, t0)
            if stop:
                return stop, None
            self._check_stop()
            started = _now()
            token = call_limits.set(CallLimits(deadline=deadline, stop=self.stop))
            try:
                comp = self.model.complete(messages, tools)
            except BudgetExceeded as e:
                return "budget_exceeded", str(e)
            except ModelRequestError as e:
                if _CONTEXT_FULL.search(str(e)):  # the agent's conversation outgrew the model
                    return "context_exceeded", str(e)
                raise  # a wrong request: the runner stops the run
            except InfraError:
                raise  # not the agent's doing: the runner records it and a rerun redoes it
            except AgentpostError as e:
                return "model_error", f"{type(e).__name__}: {e}"
            finally:
                call_limits.reset(token)
            turn = comp.to_turn(len(turns))
            turn.started_at, turn.ended_at = started, _now()
            submitted = self.act(comp, turn, messages, workdir, traj_id)
            turns.append(turn)
            if submitted:
                return "submitted", None

    def act(
        self,
        comp: Completion,
        turn: Turn,
        messages: list[dict[str, Any]],
        workdir: str,
        traj_id: str,
    ) -> bool:
        """Run the turn's actions, append their observations; True when the model submitted."""
        fmt = self.format
        calls, problem = fmt.parse(comp)
        messages.append(fmt.assistant_message(comp, calls))
        turn.tool_calls = calls
        if problem:
            turn.extra["format_error"] = problem
            messages.append(fmt.problem_message(problem))
            return False
        submitted = False
        for j, call in enumerate(calls):
            self._check_stop()
            turn.observations.append(self.observe(call, turn, workdir, traj_id, j))
            submitted = submitted or call.kind == "control"
        messages.extend(fmt.observation_messages(calls, turn.observations))
        return submitted

    def observe(
        self, call: ToolCall, turn: Turn, workdir: str, traj_id: str, j: int
    ) -> Observation:
        cfg = self.config
        if call.kind == "control":
            return Observation(call_id=call.id, text="Submitted.", is_error=False)
        if call.kind != "shell":
            text = f"Error: unknown tool {call.name!r} or bad arguments; use bash with a command."
            return Observation(call_id=call.id, text=text, is_error=True)
        res = self.sandbox.exec(call.command, cwd=workdir, timeout_s=cfg.command_timeout_s)
        turn.extra.setdefault("exec_s", []).append(round(res.duration_s, 4))
        output = res.stdout + res.stderr
        if res.timed_out:
            output += f"\n[command timed out after {cfg.command_timeout_s:g}s]"
        elif res.killed:  # a whole-sandbox limit or the output cap ended it
            output += f"\n[killed: {res.killed}]"
        shown = truncate(output, cfg.observation_chars)
        if len(shown) != len(output):
            turn.extra.setdefault("truncated_chars", []).append(len(output))
        if cfg.snapshot_dir:  # content-addressed, referenced relative to the run dir
            step = turn.step if turn.step is not None else turn.index
            ref = snapshot_store.save(self.sandbox, cfg.snapshot_dir, call_index=j,
                                      traj_id=traj_id, step=step)  # fmt: skip
            turn.extra.setdefault("snapshots", []).append(ref)
        text = f"exit_code: {res.exit_code}\n{shown}"
        return Observation(call_id=call.id, text=text, exit_code=res.exit_code,
                           is_error=False, timed_out=res.timed_out)  # fmt: skip
