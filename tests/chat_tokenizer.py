"""Test tokenizers: agentpost's character-level ChatML tokenizer (built here, no downloads), and
a template that rewrites history (drops the reasoning of every assistant message but the last,
as some thinking templates do), which is not prefix-stable."""

from __future__ import annotations

from agentpost.train.tiny import CHATML, char_chat_tokenizer

FORGETFUL = CHATML.replace(
    "{% if m.reasoning_content %}", "{% if m.reasoning_content and loop.last %}"
)


def chat_tokenizer(template: str = CHATML):
    return char_chat_tokenizer(template)
