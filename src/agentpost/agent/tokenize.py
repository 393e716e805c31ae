"""Token counts for models that report none (scripted models, reference policies).

The count is a real BPE tokenizer (``o200k_base``) over the rendered context: every message in
a ChatML-like layout, plus the tool schemas once. Usage computed this way is labelled
``estimated``: it is what a typical chat model would have been billed, not what any model saw.

Layer: io (loads the tokenizer's vocabulary file shipped inside its wheel).
"""

from __future__ import annotations

import functools
import json
import warnings
from typing import Any

# bpe-openai ships o200k_base's BPE ranks inside its PyPI wheel, so nothing is downloaded at run
# time (tiktoken fetches the same file from the internet on first use, which this project can't).
ENCODING = "o200k_base"


@functools.cache
def _encoding() -> Any:
    with warnings.catch_warnings():  # its loader uses a deprecated importlib.resources call
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # loads its vocabularies at import: ~0.5 s, once per process

        return bpe_openai.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """Number of ``o200k_base`` tokens in ``text`` (special-token text is counted as ordinary)."""
    return len(_encoding().encode_ordinary(text)) if text else 0


def render_message(msg: dict[str, Any]) -> str:
    """One chat message as a model would see it (ChatML-like)."""
    parts = [f"<|im_start|>{msg.get('role', 'user')}\n"]
    if msg.get("content"):
        parts.append(str(msg["content"]))
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {})
        parts.append(f"\n<tool_call>{fn.get('name')} {fn.get('arguments')}</tool_call>")
    parts.append("<|im_end|>\n")
    return "".join(parts)


def render_context(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The prompt of one call: tool schemas (in the system turn, as chat templates put them),
    then every message, then the assistant header the model continues from."""
    head = f"<tools>{json.dumps(tools, sort_keys=True)}</tools>\n" if tools else ""
    return head + "".join(render_message(m) for m in messages) + "<|im_start|>assistant\n"
