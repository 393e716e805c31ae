"""Teachers for the Security Suite builder: any OpenAI-compatible endpoint, or the offline
scripted teacher, both reached through the project's transport (``agent.transport``).

The scripted teacher is **not a model**: a reply function served on the loopback chat server
(``agent.loopback``) that answers each Suite prompt from the task's own files, cycling through
good and bad answers so that every filter has something to keep and something to reject. Its
rows are labelled ``teacher: scripted-teacher (offline, not a model)`` in their provenance.

| type | sample k mod n → answer |
|---|---|
| coding (both) | 0 secure reference as a diff · 1 vulnerable reference as a diff · 2 prose, no diff |
| planning | 0 the true CWE · 1 CWE-20 (generic; ``soft`` may accept it) · 2 a wrong CWE · 3 broken JSON |
| testing | 0 the task's exploit test as a patch · 1 a test that always passes · 2 one that always fails · 3 a patch that rewrites the implementation |

Layer: io.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from agentpost.agent.llm import Model
from agentpost.security.model import SecurityTask

SCRIPTED = "scripted"
SCRIPTED_LABEL = "scripted-teacher (offline, not a model)"
TEST_DIR = "tests/sv_security"


def _new_file_diff(rel: str, text: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(difflib.unified_diff([], lines, "/dev/null", f"b/{rel}"))


def reference_diff(task: SecurityTask, impl: str) -> str:
    """A unified diff from the task's starter files to its ``impl`` reference."""
    ref, env = task.references[impl], task.environment_dir
    out = []
    for p in sorted(x for x in ref.rglob("*") if x.is_file()):
        rel = str(p.relative_to(ref))
        old = (env / rel).read_text().splitlines(keepends=True) if (env / rel).is_file() else []
        new = p.read_text().splitlines(keepends=True)
        a = f"a/{rel}" if old else "/dev/null"
        out.append("".join(difflib.unified_diff(old, new, a, f"b/{rel}")))
    return "".join(out)


def _coding(task: SecurityTask, k: int) -> str:
    if k % 3 == 2:
        return "I would validate the input carefully, but here is no diff."
    impl = "secure" if k % 3 == 0 else "vulnerable"
    return f"Here is the change.\n```diff\n{reference_diff(task, impl)}```\n"


def _planning(task: SecurityTask, k: int, names: dict) -> str:
    if k % 4 == 3:
        return '```json\n{"feature_summary": "unfinished", "primary_cwes": [\n```'
    true_ids = [f"CWE-{c}" for c in task.cwes]
    wrong = "CWE-89" if "CWE-89" not in true_ids else "CWE-79"
    ids = {0: true_ids, 1: ["CWE-20"], 2: [wrong]}[k % 4]
    report = {
        "feature_summary": task.instruction.strip().splitlines()[0].lstrip("# "),
        "primary_cwes": [
            {
                "id": i,
                "name": names.get(i.split("-")[1], {}).get("name", ""),
                "rationale": task.sink,
                "confidence": 0.8,
            }
            for i in ids
        ],  # fmt: skip
        "related_cwes": [],
        "security_plan": [
            {
                "control": task.hints.get("L4", ""),
                "implementation_guidance": task.hints.get("L3", ""),
                "code_location": task.entry,
                "failure_behavior": "reject the request",
            }
        ],  # fmt: skip
        "evidence_reviewed": [{"kind": "file", "reference": task.entry, "summary": task.sink}],
    }
    return f"```json\n{json.dumps(report, indent=1)}\n```"


def _testing(task: SecurityTask, k: int) -> str:
    cmd = f"cd {TEST_DIR} && APP_DIR=/app python3 test_exploit.py"
    if k % 4 == 0:
        files = {"_harness.py": task.harness.read_text(),
                 "test_exploit.py": (task.tests_dir / "test_security.py").read_text()}  # fmt: skip
        files |= {p.name: p.read_text() for p in sorted(task.tests_dir.glob("_*.py"))}
    elif k % 4 == 1:
        files = {"test_exploit.py": "print('the app looks fine')\n"}
    elif k % 4 == 2:
        files = {"test_exploit.py": "raise SystemExit(1)\n"}
    else:  # rewrites the implementation so that the test passes anywhere
        files = {"test_exploit.py": "print('ok')\n"}
    patch = "".join(_new_file_diff(f"{TEST_DIR}/{n}", t) for n, t in files.items())
    if k % 4 == 3:
        patch += _new_file_diff("sv_injected_impl.py", "x = 1\n")
    answer = {
        "test_command": cmd,
        "test_patch": patch,
        "tests": [
            {
                "name": "exploit",
                "cwes": [f"CWE-{c}" for c in task.cwes],
                "input": task.hints.get("L4", ""),
                "expected_result": "rejected",
                "security_property": task.security_test,
            }
        ],  # fmt: skip
    }
    return f"```json\n{json.dumps(answer)}\n```"


def scripted_answer(task: SecurityTask, task_type: str, k: int, names: dict) -> str:
    """The scripted teacher's k-th answer for one task and type (module table)."""
    if task_type in ("functional_coding", "security_coding"):
        return _coding(task, k)
    if task_type == "planning":
        return _planning(task, k, names)
    if task_type == "testing":
        return _testing(task, k)
    raise ValueError(f"unknown task type {task_type!r}")


def scripted_reply_fn(
    prompts: dict[str, tuple[SecurityTask, str]], names: dict
) -> Callable[[dict[str, Any]], str]:
    """A loopback reply function: the user message identifies (task, type); the k-th request
    for the same prompt gets the k-th answer."""
    seen: Counter[str] = Counter()

    def reply(body: dict[str, Any]) -> str:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        task, task_type = prompts[user]
        k = seen[user]
        seen[user] += 1
        return scripted_answer(task, task_type, k, names)

    return reply


@contextmanager
def open_teacher(
    spec: str,
    prompts: dict[str, tuple[SecurityTask, str]],
    names: dict,
    *,
    model: str | None = None,
    temperature: float = 1.0,
    max_tokens: int | None = None,
) -> Iterator[tuple[Model, str]]:
    """(model, label) for ``spec``: ``scripted`` (a loopback server with the scripted reply
    function) or the base URL of an OpenAI-compatible endpoint (``model`` names the model)."""
    from agentpost.agent.transport import OpenAITransport, TransportConfig
    from agentpost.errors import InputError

    if spec == SCRIPTED:
        from agentpost.agent.loopback import LoopbackServer

        with LoopbackServer(scripted_reply_fn(prompts, names), model="scripted-teacher") as srv:
            cfg = TransportConfig(model="scripted-teacher", base_url=srv.url, top_logprobs=0)
            yield OpenAITransport(cfg), SCRIPTED_LABEL
        return
    if not model:
        raise InputError(None, "--teacher", "an endpoint teacher needs a model name")
    cfg = TransportConfig(model=model, base_url=spec, temperature=temperature,
                          max_tokens=max_tokens, top_logprobs=0)  # fmt: skip
    yield OpenAITransport(cfg), model


def sample_texts(teacher: Model, messages: Sequence[dict], n: int) -> list[str]:
    """n independent answers to one prompt (text of each completion)."""
    return [teacher.complete(list(messages)).text or "" for _ in range(n)]


def load_names() -> dict:
    from agentpost.security import cwe

    return cwe.load_names()
