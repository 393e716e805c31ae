"""The teacher's context for hint-guided self-distillation (spec b.7): x ‖ H(h) ‖ y.

``hint_block(h, template)`` renders a teacher-only hint into a delimited instructions block;
``teacher_sequence`` places it between the student prompt x and the student's response y, so y
stays a contiguous suffix and the teacher's log-prob of y_t lines up with the student's token for
token. An over-long teacher input is truncated on the prefix side (the oldest prompt tokens go
first) so y is never cut; a y longer than the limit on its own cannot be scored and raises
``TeacherInputTooLong`` (the trainer masks D for that sample).

Templates (``TEMPLATES``; each holds ``{hint}`` once, filled by plain replacement):
- ``release`` (default): the release's layout: a ``<teacher_instructions>`` block whose preamble
  makes the hint a required observable behaviour and lists seven numbered steps, then
  ``Case-specific security hint:`` and the hint on its own line. The steps' wording is the spec's
  paraphrase (the project commits no text copied from the release), so the teacher's tokens are
  close to but not exactly the release's; a template file with the release's text reproduces it.
- ``paraphrase``: agentpost's earlier one-paragraph block (``Hint:`` line).
- ``library``: the slime library's default when no template is configured.

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Sequence

RELEASE_TEMPLATE = (
    "<teacher_instructions>\n"
    "Treat every case-specific security hint as a required, observable behaviour. Work in this "
    "order:\n"
    "1. Before editing, extract the functional, benign-compatibility and security requirements.\n"
    "2. Inspect the relevant code, the existing tests and the repository history first.\n"
    "3. Make the smallest targeted edit to the source.\n"
    "4. Test through the real public API.\n"
    "5. Exercise at least one benign case and one adversarial case, then run the relevant "
    "existing tests.\n"
    "6. Audit the final diff under the headings FUNCTIONAL, SECURITY, REGRESSION and DIFF.\n"
    "7. Stop repeating a command after two equivalent timeouts; check differently.\n"
    "\n"
    "Case-specific security hint:\n"
    "{hint}\n"
    "</teacher_instructions>\n"
)
PARAPHRASE_TEMPLATE = (
    "\n<teacher_instructions>\n"
    "Treat the hint below as a required, observable behaviour. Before editing, extract the "
    "functional, benign-compatibility and security requirements; inspect the code, tests and "
    "history first; make the smallest targeted edit; test through the real public API with at "
    "least one benign and one adversarial case plus the existing tests; audit the final diff "
    "under FUNCTIONAL, SECURITY, REGRESSION and DIFF headings; stop repeating a command after "
    "two equivalent timeouts.\nHint: {hint}\n</teacher_instructions>\n"
)
LIBRARY_TEMPLATE = "\n\nTeacher-only hint:\n{hint}\n\n"
TEMPLATES = {"release": RELEASE_TEMPLATE, "paraphrase": PARAPHRASE_TEMPLATE,
             "library": LIBRARY_TEMPLATE}  # fmt: skip
MAX_TEACHER_TOKENS = 75_000


class TeacherInputTooLong(ValueError):
    """The response alone exceeds the teacher's context: it cannot be scored."""


def check_template(template: str) -> str:
    """``template`` unchanged if it holds ``{hint}`` exactly once, else ``ValueError``."""
    if template.count("{hint}") != 1:
        raise ValueError("a teacher hint template must contain {hint} exactly once")
    return template


def hint_block(hint: str, template: str = RELEASE_TEMPLATE) -> str:
    """H(h): ``template`` with ``hint`` (stripped) in place of ``{hint}``."""
    if not hint.strip():
        raise ValueError("empty teacher hint")
    return check_template(template).replace("{hint}", hint.strip())


def contains(seq: Sequence[int], sub: Sequence[int]) -> bool:
    """Whether ``sub`` occurs contiguously in ``seq``."""
    n = len(sub)
    return n > 0 and any(list(seq[i : i + n]) == list(sub) for i in range(len(seq) - n + 1))


def teacher_sequence(
    prompt_ids: Sequence[int],
    block_ids: Sequence[int],
    completion_ids: Sequence[int],
    max_len: int = MAX_TEACHER_TOKENS,
) -> tuple[list[int], int]:
    """(teacher input ids, index of y's first token) for x ‖ H(h) ‖ y, at most ``max_len``
    tokens, cut from the left. Shapes: [P], [H], [T] → [≤ max_len], int with ids[start:] = y."""
    y = list(completion_ids)
    if len(y) >= max_len:  # y_0 needs at least one token of context
        raise TeacherInputTooLong(f"response of {len(y)} tokens exceeds {max_len}")
    prefix = list(prompt_ids) + list(block_ids)
    keep = max_len - len(y)
    prefix = prefix[len(prefix) - keep :] if len(prefix) > keep else prefix
    ids = prefix + y
    start = len(prefix)
    assert ids[start:] == y, "teacher/student token alignment broken"
    return ids, start
