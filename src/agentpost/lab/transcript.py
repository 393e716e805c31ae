"""The lab policy's transcript: one shell command per assistant turn, ``submit`` to stop.

A tiny model trained from scratch cannot learn tool-call JSON in minutes on a CPU, so the lab
uses the plainest agent format there is, the same in SFT rows and in RL rollouts:

    <|task|>INSTRUCTION<|cmd|>COMMAND<|end|><|obs|>[EXIT] OUTPUT<|cmd|>submit<|end|>

``TEMPLATE`` renders a conversation this way (user = the instruction, assistant = a command,
tool = an observation, the first ``OBS_CHARS`` characters of the output). Every boundary is a
special token, so tokenising a rollout piece by piece (prompt, each generated turn, each
observation) gives the same ids as tokenising the whole transcript: what SFT trains on is what
RL generates from. It is prefix-stable, as ``sft.rows`` requires, with ``<|cmd|>`` as the
assistant header (context) and ``<|end|>`` as the end-of-turn target. ``plans`` are the scripted
behaviours the papers need, as command lists over a generated task's own commands:
``careful`` (look, solve, check, submit), ``direct`` (solve, submit: the short correct path),
``wasteful`` (re-reads the same files before solving), ``hasty`` and ``hasty-look`` (a wrong
candidate, submitted without a check) and ``wrong-then-repaired`` (wrong candidate, the check
fails, solve, check, submit). Every path fits ``MAX_TURNS``, the rollouts' turn limit.

Layer: pure.
"""

from __future__ import annotations

END, CMD, OBS, TASK = "<|end|>", "<|cmd|>", "<|obs|>", "<|task|>"
SPECIAL = (END, CMD, OBS, TASK)
SUBMIT = "submit"
OBS_CHARS = 160
TEMPLATE = (
    "{% for m in messages %}"
    "{% if m.role == 'user' %}" + TASK + "{{ m.content }}"
    "{% elif m.role == 'assistant' %}" + CMD + "{{ m.content }}" + END + ""
    "{% else %}" + OBS + "{{ m.content }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}" + CMD + "{% endif %}"
)


def observation(exit_code: int | None, output: str) -> str:
    """What the policy sees after a command: its exit code and the start of its output."""
    text = output.replace("\r", "")[:OBS_CHARS].rstrip("\n")
    return f"[{exit_code}] {text}"


MAX_TURNS = 10  # every scripted path fits (the longest, ``wasteful``, has 9 commands)
WASTE_REPEATS = 5  # wasteful: after ``ls``, five reads alternating between two files' views

# The student's mixture (stage-1 SFT): one row per behaviour and train task. Four succeed at
# different cost, two submit a wrong candidate; under perfect imitation 4/6 of rollouts resolve,
# so groups of 8 sit in HERO's gated range and SCVD's student forms wrong candidates a check
# exposes (``wrong-then-repaired`` shows the repair).
STUDENT = ("direct", "careful", "wasteful", "wrong-then-repaired", "hasty", "hasty-look")
# The teacher trains on ``verified`` versions of the same six: every student prefix up to its
# candidate, then always a check, and after a failed check the repair and the check again.


def plans(explore: list[str], oracle: str, wrong: str, check: str) -> dict[str, list[str]]:
    """Each scripted behaviour's commands (the last is always ``submit``; none longer than
    ``MAX_TURNS``). The candidate is the first ``oracle`` or ``wrong`` command."""
    reads = explore[1:] or explore
    return {
        "direct": [oracle, SUBMIT],
        "careful": [explore[0], reads[0], oracle, check, SUBMIT],
        "wasteful": [
            explore[0],
            *[reads[i % len(reads)] for i in range(WASTE_REPEATS)],
            oracle,
            check,
            SUBMIT,
        ],  # fmt: skip
        "wrong-then-repaired": [wrong, check, oracle, check, SUBMIT],
        "hasty": [wrong, SUBMIT],
        "hasty-look": [explore[0], reads[0], wrong, SUBMIT],
    }


def verified(plan: list[str], oracle: str, wrong: str, check: str) -> list[str]:
    """The teacher's version of a plan: its prefix through the first candidate, then the check;
    after a wrong candidate the repair and the check again; then ``submit``."""
    at = next(i for i, c in enumerate(plan) if c in (oracle, wrong))
    tail = [check] if plan[at] == oracle else [check, oracle, check]
    return [*plan[: at + 1], *tail, SUBMIT]


def messages(instruction: str, steps: list[tuple[str, str | None]]) -> list[dict]:
    """A conversation: the instruction, then (command, observation or None) per turn."""
    out: list[dict] = [{"role": "user", "content": instruction.strip()}]
    for command, obs in steps:
        out.append({"role": "assistant", "content": command})
        if obs is not None:
            out.append({"role": "tool", "content": obs})
    return out
