"""Stage-0 copy rows: seeded, the answer is the instruction's items in order, in the surface
forms the lab's instructions and commands use; the lab tokenizer keeps each name one token."""

from __future__ import annotations

import pytest

from agentpost.lab.curriculum import PREFIX, copy_rows


def test_copy_rows_repeat_their_items_in_order():
    rows = copy_rows(50, seed=3)
    assert [r.messages for r in rows] == [r.messages for r in copy_rows(50, seed=3)]
    assert [r.messages for r in rows] != [r.messages for r in copy_rows(50, seed=4)]
    for r in rows:
        user, answer = r.messages
        assert user["content"] == PREFIX + answer["content"]
        assert answer["train"] and not user["train"]
        assert 3 <= len(answer["content"].split()) <= 8
    forms = {x[0] for r in rows for x in r.messages[1]["content"].split()}
    assert forms == {"/", "'", '"'}


def test_the_lab_tokenizer_keeps_a_name_one_token_wherever_the_family_writes_it():
    pytest.importorskip("transformers")
    from agentpost.lab.policy import train_tokenizer

    texts = [
        "Count the lines of /app/jobs.csv that contain the word 'timeout' to /app/count.txt",
        "grep -c 'timeout' /app/jobs.csv > /app/count.txt",
        "head -3 /app/jobs.csv",
    ] * 30
    tok = train_tokenizer(texts, 400)
    for text in texts[:3]:
        pieces = tok.tokenize(text)
        assert "jobs" in pieces, pieces  # one token between "/" and "."
        assert ("timeout" in pieces) == ("timeout" in text), pieces  # and inside quotes
    # the commands' fixed syntax merges: a command is a few tokens, not one per character
    assert len(tok.tokenize(texts[1])) <= 17, tok.tokenize(texts[1])  # 17: the delimiters alone
    assert tok.decode(tok.encode(texts[1], add_special_tokens=False)) == texts[1]


def test_a_syntax_merging_tokenizer_is_refused_by_the_gguf_writer():
    pytest.importorskip("transformers")
    from agentpost.lab.gguf import _tokenizer_fields
    from agentpost.lab.policy import train_tokenizer

    texts = ["grep -c 'timeout' /app/app.log > /app/count.txt"] * 20
    with pytest.raises(ValueError, match="llama_compatible=True"):
        _tokenizer_fields(train_tokenizer(texts, 300))
    tokens, _, _ = _tokenizer_fields(train_tokenizer(texts, 300, llama_compatible=True))
    assert "<|end|>" in tokens
