"""Judges that read text: any OpenAI-compatible endpoint, and a recorded judge that replays
raw answers saved from an earlier run.

``OpenAIJudge`` goes through the agent runtime's transport (retries on 429/5xx/timeouts,
concurrency limit, token and cost budget shared through one ``Ledger``), at temperature 0 and
with JSON output requested (``response_format: json_object``; servers that ignore it are still
parsed). ``RecordedJudge`` answers from ``{"judge", "key", "raw"}`` lines, ``key`` being the
sha256 of the request messages (``ask.messages_key``); a request it has no answer for is a
``JudgeError`` (counted as an invalid answer, so it ends as an abstention).

Layer: io.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentpost.agent.transport import Ledger, OpenAITransport, TransportConfig
from agentpost.errors import InputError, JudgeError
from agentpost.judges.ask import messages_key
from agentpost.judges.base import JudgeReply
from agentpost.prices import Prices
from agentpost.trajectory.model import Trajectory


class OpenAIJudge:
    def __init__(
        self,
        id: str,
        model: str,
        base_url: str | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        max_tokens: int | None = None,
        extra_body: dict[str, Any] | None = None,
        json_mode: bool = True,
        timeout_s: float = 300.0,
        max_retries: int = 6,
        backoff_s: float = 1.0,
        concurrency: int = 4,
        max_total_tokens: int | None = None,
        max_cost_usd: float | None = None,
        prices: Prices | None = None,
        ledger: Ledger | None = None,
    ):
        self.id = id
        body = dict(extra_body or {})
        if json_mode:
            body.setdefault("response_format", {"type": "json_object"})
        self._fp = {"kind": "openai", "model": model, "base_url": base_url, "max_tokens": max_tokens,
                    "extra_body": body, "temperature": 0}  # fmt: skip
        cfg = TransportConfig(
            model=model, base_url=base_url, api_key_env=api_key_env, temperature=0.0,
            max_tokens=max_tokens, top_logprobs=0, extra_body=body, timeout_s=timeout_s,
            max_retries=max_retries, backoff_s=backoff_s, concurrency=concurrency,
            max_total_tokens=max_total_tokens, max_cost_usd=max_cost_usd, prices=prices,
        )  # fmt: skip
        self.transport = OpenAITransport(cfg, ledger)

    @property
    def fingerprint(self) -> dict[str, Any]:
        return self._fp

    def ask(self, messages: list[dict[str, Any]], traj: Trajectory, case_id: str) -> JudgeReply:
        comp = self.transport.complete(messages)
        usage: dict[str, Any] = {}
        if comp.usage is not None:
            usage = comp.usage.model_dump(exclude_none=True, exclude={"source"})
            usage.setdefault("cost_usd", None)
        return JudgeReply(comp.text or "", usage)


class RecordedJudge:
    def __init__(self, id: str, path: str | Path, judge: str | None = None):
        self.id = id
        self.path = Path(path)
        self.answers: dict[str, str] = {}
        want = judge or id
        try:
            lines = self.path.read_bytes().splitlines()
        except OSError as e:
            raise InputError(self.path, None, f"cannot read recorded answers: {e}") from None
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
                if row.get("judge", want) == want:
                    self.answers[row["key"]] = row["raw"]
            except (orjson.JSONDecodeError, KeyError, AttributeError) as e:
                raise InputError(self.path, f"line {n}", f"need {{judge, key, raw}}: {e}") from None

    @property
    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "recorded", "path": str(self.path), "answers": len(self.answers)}

    def ask(self, messages: list[dict[str, Any]], traj: Trajectory, case_id: str) -> JudgeReply:
        k = messages_key(messages)
        if k not in self.answers:
            raise JudgeError(f"{self.path}: no recorded answer for request {k[:12]}")
        return JudgeReply(self.answers[k])
