"""Replay fidelity (pure): normalisation across scaffolds and the summary."""

from __future__ import annotations

from agentpost.replay.fidelity import CallFidelity, compare, normalize, similarity, summarize


def test_normalize_strips_scaffold_wrappers() -> None:
    assert normalize("<returncode>0</returncode>\n<output>\nHello\n</output>") == "Hello"
    assert normalize("8.2\r\n(Open file: /r/x.py)\n(Current directory: /r)\nbash-$") == "8.2"
    assert normalize("New Terminal Output:\n\nroot@abc123:/app# ls\n") == "@:/app# ls"
    assert normalize("\x1b[31mred\x1b[0m   \n\n") == "red"
    assert normalize(None) == "" and len(normalize("x" * 10_000)) == 2000


def test_similarity_and_summary() -> None:
    assert (
        similarity("root@CONTAINER:/app# ls\nA", "New Terminal Output:\nroot@sandbox:/app# ls\nA")
        == 1.0
    )
    assert similarity("", None) == 1.0 and similarity("abc", "xyz") == 0.0
    calls = [compare("ok", 0, "ok", 0), compare(None, 1, "x", 2), compare("ab", None, "ac", 0)]
    assert calls[0] == CallFidelity(True, 1.0) and calls[1] == CallFidelity(False, None)
    assert summarize(calls) == {
        "calls_compared": 3,
        "exit_code_match": 0.5,
        "text_similarity": 0.75,
        "exit_codes_compared": 2,
        "exit_codes_matched": 1,
    }
    assert summarize([]) == {"calls_compared": 0, "exit_code_match": None, "text_similarity": None,
                             "exit_codes_compared": 0, "exit_codes_matched": 0}  # fmt: skip
