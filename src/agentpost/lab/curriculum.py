"""Stage-0 of the lab policy: a copy curriculum standing in for pretraining.

A pretrained LLM arrives able to copy a name from its prompt; a model trained from scratch does
not, and on the scripted behaviours alone a ~1M-parameter model learns the commands' shapes long
before it learns to copy their parameters (measured: 0/30 held-out instances after 750 steps of
stage-1 SFT, every command carrying the train split's most frequent names). ``copy_rows`` makes
short rows whose only content is copying: the instruction ``Repeat: ITEMS`` and the answer
``ITEMS``, where the items are the task family's names in the surface forms the instructions and
commands use (``/app/jobs.csv``, ``'timeout'``, ``"score"``). Stage-1 SFT then starts from a
model that copies. It is a departure from the papers (their students are pretrained LLMs), said
in the lab's outputs.

Layer: pure.
"""

from __future__ import annotations

import random

from agentpost.lab import taskgen as tg
from agentpost.sft.rows import SFTRow, make_row

PREFIX = "Repeat: "


def _item(rng: random.Random) -> str:
    k = rng.randrange(5)
    if k == 0:
        return f"/app/{rng.choice(tg.STEMS)}.{rng.choice(('csv', 'log'))}"
    if k == 1:
        return f"/app/{rng.choice(tg.OUTS)}"
    if k == 2:
        return f"'{rng.choice(tg.WORDS)}'"
    if k == 3:
        return '"' + rng.choice((*tg.COLUMNS, "status")) + '"'
    return '"' + rng.choice([v for pair in tg.STATUS_PAIRS for v in pair]) + '"'


def copy_rows(n: int, seed: int = 0) -> list[SFTRow]:
    """``n`` rows, each 3–8 items to repeat in order (seeded)."""
    rng = random.Random(f"agentpost-lab-copy:{seed}")
    rows = []
    for _ in range(n):
        items = " ".join(_item(rng) for _ in range(rng.randint(3, 8)))
        msgs = [
            {"role": "user", "content": PREFIX + items},
            {"role": "assistant", "content": items},
        ]
        rows.append(make_row(msgs, train_from=0, meta={"recipe": "lab-stage0-copy"}))
    return rows
