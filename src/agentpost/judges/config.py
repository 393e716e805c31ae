"""The panel configuration: three judges, the arbiter, concurrency and a shared budget.

A config file (YAML or JSON)::

    judges:
      - {id: glm, kind: openai, model: glm-5.2, base_url: http://host/v1, api_key_env: GLM_KEY}
      - {id: kimi, kind: openai, model: kimi-k3, base_url: ..., max_tokens: 8192}
      - {id: h, kind: heuristic, variant: artifact}
      - {id: old, kind: recorded, path: answers.jsonl}   # replays saved raw answers
    arbiter: glm            # the judge strongest on calibration (`agentpost scvd calibrate`)
    concurrency: 4          # judge calls in flight
    budget: {max_total_tokens: 5000000, max_cost_usd: 20.0,
             prices: {input: 0.5, output: 2.0}}        # USD per million tokens (cached: 0.1 x input)

A judge's ``kind`` is looked up in ``JUDGE_KINDS`` through the one component loader
(``agentpost.components``); any other kind is a ``package.module:factory`` path, called as
``factory(spec=..., ctx=JudgeContext)`` like the built-in ones. Kind ``heuristic`` is a seat for
the method's own offline annotator (``judges.base.HeuristicSeat``): SCVD fills it with a
variant of its heuristic, SecureVibe with its pre-label heuristic.

The embedded default (no file) is offline: SCVD's three rule seats (``changes``, ``commands``,
``narration``: what each call changed, the commands and outputs, the agent's own words),
arbiter ``rules-commands`` (the seat with the highest pooled accuracy on the tune split of the
real labels; ``scvd calibrate real`` re-measures it). They share the change records, so their
agreement overstates what independent judges would give: ``HEURISTIC_CAVEAT`` goes into the
summary and the ``producer`` block of ``metrics.json``.

Layer: io.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

from agentpost.agent.transport import Ledger
from agentpost.components import resolve
from agentpost.config_checks import at_least, check
from agentpost.errors import InputError
from agentpost.judges.base import HeuristicSeat, Judge
from agentpost.judges.remote import OpenAIJudge, RecordedJudge
from agentpost.prices import Prices

DEFAULT_CONFIG: dict[str, Any] = {
    "judges": [
        {"id": "rules-changes", "kind": "heuristic", "variant": "changes"},
        {"id": "rules-commands", "kind": "heuristic", "variant": "commands"},
        {"id": "rules-narration", "kind": "heuristic", "variant": "narration"},
    ],
    "arbiter": "rules-commands",
    "concurrency": 4,
}
HEURISTIC_CAVEAT = (
    "Every judge is an offline rule seat, no model: one reads what each call changed, one the "
    "commands and their outputs, one the agent's own words (scvd.seats). They take the candidate "
    "from the same change records, so they agree on boundaries more than independent judges "
    "would, and an output that contradicts the task only to a reader of the code reads as a "
    "pass. Their accuracy is measured, not assumed: `agentpost scvd calibrate real --heuristic` "
    "scores them on hand-labelled real trajectories (tune and held-out splits); label your own "
    "agent's runs before trusting these numbers."
)
_OPENAI_KEYS = {"model", "base_url", "api_key_env", "max_tokens", "extra_body", "json_mode",
                "timeout_s", "max_retries", "backoff_s"}  # fmt: skip


@dataclass
class Panel:
    judges: list[Judge]
    arbiter: int
    concurrency: int = 4
    config: dict[str, Any] = field(default_factory=dict)
    ledger: Ledger = field(default_factory=Ledger)

    def __post_init__(self) -> None:
        check(self, {
            "judges": (len(self.judges) == 3, "exactly three judges"),
            "arbiter": (at_least(self.arbiter, 0) and self.arbiter < len(self.judges),
                        "the index of one of the judges"),
            "concurrency": (at_least(self.concurrency, 1), "at least 1"),
        })  # fmt: skip

    @property
    def ids(self) -> list[str]:
        return [j.id for j in self.judges]

    @property
    def heuristic_only(self) -> bool:
        """True when no judge reads text (the embedded default): outputs carry the caveat."""
        return all(j.fingerprint.get("kind") == "heuristic" for j in self.judges)


def load_config(path: str | Path | None) -> dict[str, Any]:
    if path is None:
        return DEFAULT_CONFIG
    path = Path(path)
    try:
        text = path.read_bytes()
        data = yaml.safe_load(text) if path.suffix in (".yaml", ".yml") else orjson.loads(text)
    except (OSError, yaml.YAMLError, orjson.JSONDecodeError) as e:
        raise InputError(path, None, f"cannot read judge config: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("judges"), list):
        raise InputError(path, "$.judges", "a judge config needs a list 'judges'")
    return data


def build_panel(
    config: dict[str, Any], where: str = "judge config", base: Path | None = None
) -> Panel:
    """Judges from a config dict (see the module docstring)."""
    ledger = Ledger()
    budget = dict(config.get("budget") or {})
    prices = _prices(budget.pop("prices", None), where)
    conc = config.get("concurrency", 4)
    if not at_least(conc, 1):  # before any judge is built with it
        raise InputError(where, "$.concurrency", f"must be an integer >= 1, got {conc!r}")
    judges: list[Judge] = []
    for i, spec in enumerate(config["judges"]):
        judges.append(_judge(spec, f"$.judges[{i}]", where, base, ledger, budget, prices, conc))
    ids = [j.id for j in judges]
    if len(set(ids)) != len(ids):
        raise InputError(where, "$.judges", f"judge ids must be unique: {ids}")
    if len(judges) != 3:
        raise InputError(where, "$.judges", f"the panel needs exactly three judges, got {len(ids)}")
    arbiter = config.get("arbiter", ids[0])
    if arbiter not in ids:
        raise InputError(where, "$.arbiter", f"{arbiter!r} is not one of {ids}")
    return Panel(judges, ids.index(arbiter), conc, config, ledger)


def _prices(given: Any, where: str) -> Prices | None:
    """``budget.prices`` as ``agentpost.prices.Prices`` in USD (``cached_input``, the key before
    one ``Prices``, still reads as ``cached``)."""
    if not given:
        return None
    if not isinstance(given, dict):
        raise InputError(where, "$.budget.prices", "expected {input, output, cached}")
    kw = {("cached" if k == "cached_input" else k): v for k, v in given.items()}
    try:
        return Prices(**{"unit": "USD", **kw})
    except (TypeError, ValueError) as e:
        raise InputError(where, "$.budget.prices", str(e)) from None


@dataclass
class JudgeContext:
    """What a judge factory gets beside its spec: where the spec is (for input errors) and what
    the panel's judges share (ledger, budget, prices, concurrency)."""

    where: str
    at: str
    base: Path | None
    ledger: Ledger
    budget: dict[str, Any]
    prices: Prices | None
    concurrency: int


JUDGE_KINDS = {
    "heuristic": "agentpost.judges.config:heuristic_seat",
    "recorded": "agentpost.judges.config:recorded_judge",
    "openai": "agentpost.judges.config:openai_judge",
}


def heuristic_seat(spec: dict[str, Any], ctx: JudgeContext) -> Judge:
    return HeuristicSeat(str(spec["id"]), str(spec.get("variant", "artifact")), ctx.where, ctx.at)


def recorded_judge(spec: dict[str, Any], ctx: JudgeContext) -> Judge:
    if "path" not in spec:
        raise InputError(ctx.where, ctx.at, "a recorded judge needs 'path'")
    p = Path(spec["path"])
    p = p if p.is_absolute() or ctx.base is None else ctx.base / p
    return RecordedJudge(str(spec["id"]), p, spec.get("judge"))


def openai_judge(spec: dict[str, Any], ctx: JudgeContext) -> Judge:
    if "model" not in spec:
        raise InputError(ctx.where, ctx.at, "an openai judge needs 'model'")
    kw = {k: v for k, v in spec.items() if k in _OPENAI_KEYS}
    env = spec.get("api_key_env")
    if env is not None and not os.environ.get(str(env)):  # named, but unset: never "EMPTY"
        raise InputError(ctx.where, ctx.at + ".api_key_env", f"environment variable {env} is not "
                         "set (set it, to EMPTY for a keyless server)")  # fmt: skip
    return OpenAIJudge(str(spec["id"]), concurrency=ctx.concurrency, ledger=ctx.ledger,
                       prices=ctx.prices, max_total_tokens=ctx.budget.get("max_total_tokens"),
                       max_cost_usd=ctx.budget.get("max_cost_usd"), **kw)  # fmt: skip


def _judge(spec, at, where, base, ledger, budget, prices, conc) -> Judge:
    if not isinstance(spec, dict) or "id" not in spec or "kind" not in spec:
        raise InputError(where, at, "each judge needs an 'id' and a 'kind'")
    ctx = JudgeContext(where, at, base, ledger, budget, prices, conc)
    kind = str(spec["kind"])
    try:
        factory = resolve(JUDGE_KINDS, kind, "judge kind")
        inspect.signature(factory).bind(spec=spec, ctx=ctx)  # a factory of (spec, ctx)
    except ValueError as e:
        raise InputError(where, at + ".kind", str(e)) from None
    except TypeError as e:  # a module, a constant, or a callable of other arguments
        why = f"judge kind {kind!r} names no factory of (spec, ctx): {e}"
        raise InputError(where, at + ".kind", why) from None
    return factory(spec=spec, ctx=ctx)
