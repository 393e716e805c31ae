"""The project's SFT rows: chat messages with a per-message training flag, tokenised through the
student's chat template into ``input_ids`` and ``labels`` (-100 where no loss), and the verl
multi-turn form with a per-message loss mask.

A row (``SFTRow``) is TRL's conversational format (``role``, ``content``, optional
``reasoning_content``, ``tool_calls``, ``tool_call_id``) plus ``train: bool`` on every message,
and a ``meta`` dict (``task_id``, ``source``, ``recipe``, anything else). SCVD sets ``train`` on
the teacher's assistant messages after the hand-off, FTD on every teacher assistant message,
SecureVibe on its own recipe's targets. Only assistant messages may carry ``train=True``.

Tokenisation (``tokenize_row``): the whole conversation is rendered once with
``tokenizer.apply_chat_template`` and tokenised once (so the ids equal what the model sees at
inference). The characters of a trained assistant message are those its template rendering adds
after the generation prompt: ``render(m[:i+1])[len(render(m[:i], add_generation_prompt=True)):]``,
so the role header is context and the end-of-turn marker is a target. A token is supervised when
its first character falls in such a span (offsets from a fast tokenizer). The template must be
prefix-stable (each shorter conversation renders to a prefix of the longer one); a template that
rewrites history (e.g. one that drops earlier reasoning) raises ``TemplateError`` rather than
mislabelling. ``supervise_reasoning=False`` keeps the reasoning text in the context but masks it.

Truncation never cuts supervised tokens silently: with ``truncation="drop"`` (default) a row
longer than ``max_length`` is dropped with reason ``too_long``; with ``"left"`` the oldest tokens
are cut (the prefix side) and the row is dropped with reason ``supervised_exceeds_max_length``
only if that would cut a supervised token. ``tokenize_rows`` counts every reason.

Departure from TRL: TRL's ``assistant_only_loss`` needs ``{% generation %}`` tags in the
template and supervises every assistant message; per-message flags need explicit labels, which
TRL's SFTTrainer takes as a pre-tokenised ``labels`` column unchanged.

Layer: pure (the tokenizer object is passed in; nothing is read or written here).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, model_validator

FORMAT = "agentpost.sft/1"
IGNORE = -100
ROLES = {"system", "user", "assistant", "tool"}


class TemplateError(ValueError):
    """The chat template does not render the conversation prefix-stably."""


class RowDropped(ValueError):  # noqa: N818 (a reason, counted by tokenize_rows)
    """A row cannot be tokenised within the limits; ``reason`` is its counted cause."""

    def __init__(self, reason: str, detail: str = ""):
        self.reason = reason
        super().__init__(f"{reason}: {detail}" if detail else reason)


class SFTRow(BaseModel):
    """One training conversation. ``messages[i]["train"]`` says whether message i is a target."""

    messages: list[dict[str, Any]]
    meta: dict[str, Any] = Field(default_factory=dict)
    format: str = FORMAT

    @model_validator(mode="after")
    def _check(self) -> SFTRow:
        for i, m in enumerate(self.messages):
            if m.get("role") not in ROLES:
                raise ValueError(f"messages[{i}].role must be one of {sorted(ROLES)}")
            if not isinstance(m.get("train"), bool):
                raise ValueError(f"messages[{i}].train must be true or false")
            if m["train"] and m["role"] != "assistant":
                raise ValueError(f"messages[{i}] is a {m['role']} message marked train=true")
        return self

    @property
    def trained(self) -> list[int]:
        return [i for i, m in enumerate(self.messages) if m["train"]]


def make_row(
    messages: list[dict[str, Any]], train_from: int, meta: dict[str, Any] | None = None
) -> SFTRow:
    """A row whose assistant messages at index ≥ ``train_from`` are targets (SCVD: the hand-off
    index; FTD: 0)."""
    msgs = [
        {**m, "train": bool(i >= train_from and m.get("role") == "assistant")}
        for i, m in enumerate(messages)
    ]
    return SFTRow(messages=msgs, meta=dict(meta or {}))


class ChatTokenizer(Protocol):
    """What ``tokenize_row`` needs: a HF fast tokenizer satisfies it."""

    def apply_chat_template(self, conversation: Any, **kw: Any) -> Any: ...

    def __call__(self, text: str, **kw: Any) -> Any: ...


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as chat templates take them: no ``train`` flag, ``None`` fields dropped, tool-call
    arguments as dicts (OpenAI logs keep them as JSON strings; HF templates ``tojson`` them)."""
    out = []
    for m in messages:
        t = {k: v for k, v in m.items() if k != "train" and v is not None}
        if t.get("tool_calls"):
            t["tool_calls"] = [_call_for_template(c) for c in t["tool_calls"]]
        out.append(t)
    return out


def _call_for_template(call: dict[str, Any]) -> dict[str, Any]:
    fn = dict(call.get("function") or {})
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
            fn["arguments"] = parsed if isinstance(parsed, dict) else {"value": parsed}
        except ValueError:
            fn["arguments"] = {"raw": args}
    return {**call, "function": fn}


def _render(tok: ChatTokenizer, msgs: list[dict[str, Any]], gen: bool, tools: Any) -> str:
    kw: dict[str, Any] = {"tokenize": False, "add_generation_prompt": gen}
    if tools is not None:
        kw["tools"] = tools
    return tok.apply_chat_template(msgs, **kw)


def supervised_spans(
    row: SFTRow, tok: ChatTokenizer, *, supervise_reasoning: bool = False, tools: Any = None
) -> tuple[str, list[tuple[int, int]]]:
    """(full rendered text, [(start, end)] character spans that carry loss)."""
    msgs = template_messages(row.messages)
    full = _render(tok, msgs, False, tools)
    spans: list[tuple[int, int]] = []
    for i in row.trained:
        head = _render(tok, msgs[:i], True, tools) if i else ""
        body = _render(tok, msgs[: i + 1], False, tools)
        if not (full.startswith(body) and body.startswith(head)):
            raise TemplateError(
                f"chat template is not prefix-stable at message {i}; per-message loss masks "
                "need a template that renders history unchanged"
            )
        start, end = len(head), len(body)
        reasoning = row.messages[i].get("reasoning_content")
        cut = full.find(reasoning, start, end) if reasoning and not supervise_reasoning else -1
        if cut >= 0:
            spans += [(start, cut), (cut + len(reasoning), end)]
        else:
            spans.append((start, end))
    return full, [(s, e) for s, e in spans if e > s]


@dataclass
class Tokenized:
    """``input_ids[T]``, ``labels[T]`` (-100 on masked), ``truncated`` tokens cut on the left."""

    input_ids: list[int]
    labels: list[int]
    truncated: int = 0

    @property
    def completion_mask(self) -> list[int]:
        """TRL's completion mask (1 where supervised)."""
        return [int(x != IGNORE) for x in self.labels]

    def as_dict(self) -> dict[str, list[int]]:
        return {"input_ids": self.input_ids, "labels": self.labels}


def tokenize_row(
    row: SFTRow,
    tokenizer: ChatTokenizer,
    *,
    max_length: int,
    supervise_reasoning: bool = False,
    truncation: Literal["drop", "left"] = "drop",
    tools: Any = None,
) -> Tokenized:
    """Token ids and labels for one row (module docstring); raises ``RowDropped``."""
    if not row.trained:
        raise RowDropped("no_trained_message")
    full, spans = supervised_spans(
        row, tokenizer, supervise_reasoning=supervise_reasoning, tools=tools
    )
    enc = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = list(enc["input_ids"]), enc["offset_mapping"]
    labels, k = [], 0
    for tid, (s, e) in zip(ids, offsets, strict=True):
        while k < len(spans) and spans[k][1] <= s:
            k += 1
        inside = k < len(spans) and spans[k][0] <= s < spans[k][1] and e > s
        labels.append(tid if inside else IGNORE)
    if all(x == IGNORE for x in labels):
        raise RowDropped("no_supervised_tokens")
    cut = len(ids) - max_length
    if cut <= 0:
        return Tokenized(ids, labels)
    if truncation == "drop":
        raise RowDropped("too_long", f"{len(ids)} tokens > max_length {max_length}")
    if any(x != IGNORE for x in labels[:cut]):
        raise RowDropped("supervised_exceeds_max_length", f"{len(ids)} tokens")
    return Tokenized(ids[cut:], labels[cut:], truncated=cut)


def tokenize_rows(
    rows: Iterable[SFTRow], tokenizer: ChatTokenizer, **kw: Any
) -> tuple[list[Tokenized], Counter[str]]:
    """Tokenise many rows; dropped rows are counted by reason, never silently lost."""
    out: list[Tokenized] = []
    dropped: Counter[str] = Counter()
    for row in rows:
        try:
            out.append(tokenize_row(row, tokenizer, **kw))
        except RowDropped as e:
            dropped[e.reason] += 1
    return out, dropped


def to_verl(row: SFTRow) -> dict[str, Any]:
    """verl's multi-turn SFT record (``MultiTurnSFTDataset``, ``data.multiturn.enable=true``):
    ``messages`` with a per-message ``loss_mask`` (0/1, verl's override of its role default)."""
    flags = [int(m["train"]) for m in row.messages]
    msgs = [
        {**m, "loss_mask": f} for m, f in zip(template_messages(row.messages), flags, strict=True)
    ]
    return {"messages": msgs, "meta": json.dumps(row.meta, sort_keys=True)}


def to_record(row: SFTRow) -> dict[str, Any]:
    """A flat record for Parquet: messages with every key present (nulls where absent, tool-call
    arguments as JSON strings) so one Arrow schema fits every row; ``meta`` as JSON text."""
    msgs = []
    for m in row.messages:
        calls = m.get("tool_calls")
        msgs.append(
            {
                "role": m["role"],
                "content": m.get("content"),
                "reasoning_content": m.get("reasoning_content"),
                "tool_calls": [_call_record(c) for c in calls] if calls else None,
                "tool_call_id": m.get("tool_call_id"),
                "train": m["train"],
            }
        )
    return {"format": row.format, "messages": msgs, "meta": json.dumps(row.meta, sort_keys=True)}


def _call_record(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function") or {}
    args = fn.get("arguments")
    return {
        "id": call.get("id"),
        "type": call.get("type") or "function",
        "function": {
            "name": fn.get("name"),
            "arguments": args if isinstance(args, str) else json.dumps(args),
        },
    }


def from_record(rec: dict[str, Any]) -> SFTRow:
    """Inverse of ``to_record`` (null fields dropped)."""
    msgs = [{k: v for k, v in m.items() if v is not None} for m in rec["messages"]]
    return SFTRow(messages=msgs, meta=json.loads(rec.get("meta") or "{}"), format=rec["format"])
