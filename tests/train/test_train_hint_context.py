"""The teacher's x ‖ H(h) ‖ y sequence: the hint sits between prompt and response, truncation
cuts the prefix and never y."""

from __future__ import annotations

import re

import pytest

from agentpost.train.hint_context import (
    LIBRARY_TEMPLATE,
    PARAPHRASE_TEMPLATE,
    TEMPLATES,
    TeacherInputTooLong,
    contains,
    hint_block,
    teacher_sequence,
)


def test_hint_block_sits_between_prompt_and_response():
    ids, start = teacher_sequence([1, 2, 3], [7, 8], [4, 5, 6], max_len=100)
    assert ids == [1, 2, 3, 7, 8, 4, 5, 6] and start == 5 and ids[start:] == [4, 5, 6]


def test_over_long_inputs_lose_prompt_tokens_from_the_left_never_the_response():
    ids, start = teacher_sequence(list(range(10)), [90, 91], [50, 51, 52], max_len=6)
    assert ids == [9, 90, 91, 50, 51, 52] and start == 3
    ids, start = teacher_sequence(list(range(10)), [90, 91], [50, 51, 52], max_len=4)
    assert ids == [91, 50, 51, 52] and start == 1  # even the block goes before y does
    with pytest.raises(TeacherInputTooLong):
        teacher_sequence([1], [2], [3, 4, 5], max_len=3)  # y_0 would have no context


def test_the_default_block_has_the_releases_layout():
    block = hint_block("  `../x` must get a 404 {not a field}\n")
    assert block.startswith("<teacher_instructions>\n")
    assert block.endswith("\n</teacher_instructions>\n")
    steps = re.findall(r"^(\d)\. ", block, flags=re.M)
    assert steps == [str(i) for i in range(1, 8)]  # seven numbered steps
    # the hint follows its own heading line, after the steps, stripped, braces kept literally
    assert "\n\nCase-specific security hint:\n`../x` must get a 404 {not a field}\n" in block
    assert block.index("7. ") < block.index("Case-specific security hint:")
    for word in ("FUNCTIONAL", "SECURITY", "REGRESSION", "DIFF", "adversarial", "timeouts"):
        assert word in block


def test_the_earlier_paraphrase_and_the_library_default_are_options():
    old = hint_block("h1", PARAPHRASE_TEMPLATE)
    assert old.startswith("\n<teacher_instructions>\nTreat the hint below")
    assert "\nHint: h1\n" in old
    assert hint_block("h1", LIBRARY_TEMPLATE) == "\n\nTeacher-only hint:\nh1\n\n"
    assert set(TEMPLATES) == {"release", "paraphrase", "library"}
    assert hint_block("h", "<<{hint}>>") == "<<h>>"
    for bad in ("no placeholder", "{hint} twice {hint}"):
        with pytest.raises(ValueError, match="exactly once"):
            hint_block("h", bad)


def test_block_and_containment():
    block = hint_block("`../x` must get a 404", PARAPHRASE_TEMPLATE)
    assert "<teacher_instructions>" in block and "`../x` must get a 404" in block
    assert block.index("FUNCTIONAL") < block.index("Hint:")
    with pytest.raises(ValueError):
        hint_block("  ")
    assert contains([1, 2, 3, 4], [2, 3]) and not contains([1, 2, 3], [3, 2])
    assert not contains([1, 2], [])
