"""The demo's entropy stage: the real agent loop against a loopback fake model with logprobs.

The scripted reference policies sample nothing, so their trajectories have no logprobs and the
report's entropy analyses (HERO b.8-b.9: turn entropy, and its association with unproductive
turns) would always say 'no logprobs'. This stage shows what those analyses look like, honestly
labelled: for two scripts (``careful`` and ``wasteful``) on the first ``TASKS`` tasks of the
bundled terminal suite, a ``LoopbackServer`` (``agent.loopback``, 127.0.0.1 only) serves the
script's replies as chat completions with server-side top-10 logprobs; the real agent loop talks
to it through the real OpenAI-compatible transport, in a real sandbox of the demo's backend,
graded by the task's real evaluator. The model is a fake: its logprobs are a hash of (token, position) and its
token counts come from the server's toy tokenizer, so the entropy numbers say nothing about any
model. ``NOTE`` says so in ``loopback/efficiency.json`` and the report prints it.

Writes ``loopback/trajectories.jsonl`` (resumable: finished rollouts are skipped) and
``loopback/efficiency.json``. No run summary is written, so the report's rollout tables stay
about the reference policies.

Layer: io.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentpost.demo.files import write_json
from agentpost.demo.model import Demo
from agentpost.intervals import RESAMPLES

MODEL = "scripted/loopback-fake-model"
SCRIPTS = ("careful", "wasteful")  # few unproductive turns, many: the association has both
TASKS = 2
NOTE = (
    f"{MODEL} is a loopback fake model, not a real model: agentpost's in-package chat-completions "
    "server on 127.0.0.1 (agentpost.agent.loopback) replays the scripted careful and wasteful "
    "policies' replies and attaches synthetic top-10 logprobs (a hash of token and position); "
    "the real agent loop recorded them through the real OpenAI-compatible transport, in real "
    "sandboxes, graded by each task's evaluator. Token counts come from the server's toy "
    "tokenizer. These entropy numbers show what the analysis looks like and say nothing about "
    "any model: point `agentpost run --model M --base-url URL` at a server that returns logprobs "
    "for real ones."
)


def _server_reply(scripted: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A loopback reply function: the scripted model's next reply to the request's messages."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        c = scripted.complete(body["messages"])
        calls = [{"name": t.name, "arguments": t.arguments} for t in c.tool_calls]
        return {"content": c.text, **({"tool_calls": calls} if calls else {})}

    return reply


def stage_loopback(d: Demo):
    """Run the stage into ``d.out / "loopback"``; returns the efficiency document's path."""
    from agentpost.agent.loop import LoopConfig
    from agentpost.agent.loopback import LoopbackServer
    from agentpost.agent.policies import policy_agents
    from agentpost.agent.run import TRAJECTORIES, Agent, run_groups
    from agentpost.agent.transport import OpenAITransport, TransportConfig
    from agentpost.hero.analyze import analyze
    from agentpost.tasks.loader import bundled_suite_path, load_suite
    from agentpost.trajectory.io import read_jsonl

    tasks = load_suite(bundled_suite_path("terminal"))[: min(TASKS, d.limit or TASKS)]
    servers: list[LoopbackServer] = []

    def served(scripted: Agent, script: str) -> Agent:
        def make(task: Any) -> OpenAITransport:  # one server per rollout: its own prefix cache
            srv = LoopbackServer(_server_reply(scripted.make(task)), model=MODEL).start()
            servers.append(srv)
            cfg = TransportConfig(model=MODEL, base_url=srv.url, timeout_s=30, top_logprobs=10)
            return OpenAITransport(cfg)

        return Agent(f"{MODEL}/{script}-script", make)

    d.progress(
        f"loopback: {MODEL} (a fake model on 127.0.0.1 replaying scripts with synthetic "
        f"logprobs) x {len(tasks)} tasks, for the entropy analyses"
    )
    run_dir = d.out / "loopback"
    try:
        res = run_groups(
            tasks,
            [served(a, s) for a, s in zip(policy_agents(list(SCRIPTS)), SCRIPTS, strict=True)],
            attempts=1,
            out_dir=run_dir,
            backend=d.box,
            loop=LoopConfig(),
            concurrency=2,
            run_id="demo-loopback",
        )
    finally:
        for srv in servers:
            srv.close()
    if res.errors:
        raise RuntimeError(f"{len(res.errors)} loopback rollouts failed: {res.errors[0]['error']}")
    trajs = read_jsonl(run_dir / TRAJECTORIES)
    doc = analyze(trajs, n_boot=RESAMPLES, inputs=[f"loopback/{TRAJECTORIES}"])
    doc["note"] = NOTE
    dest = run_dir / "efficiency.json"
    write_json(dest, doc)
    assoc = next((m["association"] for m in doc["models"] if m.get("association")), None)
    r = (assoc or {}).get("point_biserial_r")
    d.progress(
        f"loopback: {res.ran} rollouts ran ({res.skipped} already finished), {len(trajs)} "
        "trajectories with logprobs; entropy vs unproductive turns "
        f"r={'NA' if r is None else f'{r:.2f}'} (synthetic logprobs)"
    )
    return dest
