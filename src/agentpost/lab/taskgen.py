"""A procedural terminal task family for the lab: Harbor-format tasks generated from a seed.

Each instance is small enough for a policy trained from scratch on 2 CPU cores, yet has the
behaviours the papers study:
- the solution needs parameters read from the instruction (file name, field, word, value, output
  name), so a policy cannot memorise one command; the instruction writes each parameter as the
  commands do (absolute paths, the word in single quotes, fields and values in double quotes);
- there are short and long correct paths (solve at once; or explore, solve, check, submit);
- a plausible wrong candidate (case-insensitive match, header kept, substring match) passes a
  glance but fails the hidden test, and the task's ``check`` command reveals it: every family's
  check recomputes the answer by the task's exact rule and diffs it against the output file, so
  it exposes *any* wrong output (a slip of the policy's own, e.g. a miscopied field, as well as
  the scripted wrong candidate). Measured: the earlier column check (header absent) and filter
  check (no row without the value) let 22 of 137 wrong candidates of the SFT policy pass
  (pre-flight exposed 0.839): a miscopied column or an empty row set looked fine to them.

With ``one_slot`` (what the lab's experiments use) file and output names are fixed per family
and one parameter is read from the instruction (the word, the field or the value): a ~1M-parameter
policy trained from scratch here did not learn to copy three parameters at once (0/30 held-out
after stage-1 SFT, with or without a copy curriculum), and an experiment whose policy never
succeeds gives RL no signal to compare.

Families (``FAMILIES``):
- ``count-word``: count the lines of a log containing a word, exact case (wrong: ``grep -ci``);
- ``column-values``: one CSV column by name, without the header (wrong: header kept);
- ``filter-rows``: CSV rows whose field equals a value, header first (oracle: ``grep -w``;
  wrong: ``grep`` substring, which also keeps ``reopened`` when asked for ``open``).

The expected answer is computed here with Python semantics equal to the oracle's shell command
and ships as the hidden ``tests/expected.txt``; the generator rerolls an instance until the wrong
candidate's answer differs from it, so every wrong solution is really wrong.

Layer: pure.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

FAMILIES = ("count-word", "column-values", "filter-rows")
STEMS = ("app", "server", "events", "audit", "access", "jobs", "orders", "users", "sales", "trips")
OUTS = ("count.txt", "total.txt", "result.txt", "answer.txt", "out.txt")
WORDS = ("timeout", "refused", "retry", "denied", "failed", "dropped")
LEVELS = ("INFO", "WARN", "ERROR", "DEBUG")
SERVICES = ("api", "db", "cache", "auth", "queue")
COLUMNS = ("id", "name", "city", "team", "score", "age", "email")
NAMES = ("ana", "bo", "cy", "dee", "eli", "fay", "gus", "hal", "ivy", "jo", "kai", "lu")
CITIES = ("oslo", "lima", "rome", "kyiv", "pune", "cork")
TEAMS = ("red", "blue", "green", "gold")
# (value, a value that contains it): grep for the first also matches the second
# one-slot instances (the lab's experiments): file and output fixed per family, so only the word,
# the field or the value is read from the instruction
ONE_SLOT = {"count-word": ("app", "count.txt"), "column-values": ("users", "answer.txt"),
            "filter-rows": ("orders", "out.txt")}  # fmt: skip
STATUS_PAIRS = (
    ("open", "reopened"),
    ("active", "inactive"),
    ("paid", "unpaid"),
    ("done", "undone"),
)


@dataclass(frozen=True)
class TaskFiles:
    """One generated task: its id, its parameters and every file (relative path → text)."""

    id: str
    family: str
    params: dict[str, str]
    files: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple:
        """What makes two instances the same task (used to keep splits disjoint)."""
        return (self.family, *sorted(self.params.items()))


def _cell(col: str, rng: random.Random, i: int) -> str:
    return {
        "id": str(100 + i),
        "name": rng.choice(NAMES),
        "city": rng.choice(CITIES),
        "team": rng.choice(TEAMS),
        "score": str(rng.randint(0, 99)),
        "age": str(rng.randint(18, 70)),
        "email": f"{rng.choice(NAMES)}{rng.randint(1, 9)}@example.org",
        "status": "",
    }[col]


def _names(rng: random.Random, family: str, one_slot: bool) -> tuple[str, str]:
    """(file stem, output name): drawn, or the family's fixed pair when ``one_slot``."""
    if one_slot:
        return ONE_SLOT[family]
    return rng.choice(STEMS), rng.choice(OUTS)


def _count_word(rng: random.Random, one_slot: bool) -> tuple[dict, dict[str, str], str, str]:
    word = rng.choice(WORDS)
    stem, out = _names(rng, "count-word", one_slot)
    lines = []
    for i in range(rng.randint(14, 30)):
        roll = rng.random()
        w = word if roll < 0.35 else word.capitalize() if roll < 0.55 else rng.choice(WORDS)
        w = w if w.lower() != word or roll < 0.55 else "ok"
        lines.append(f"2024-03-{1 + i % 28:02d} {rng.choice(LEVELS)} {rng.choice(SERVICES)}: "
                     f"request {rng.randint(1, 999)} {w}")  # fmt: skip
    p = {"file": f"{stem}.log", "word": word, "out": out}
    expected = f"{sum(word in ln for ln in lines)}\n"
    wrong = f"{sum(word.lower() in ln.lower() for ln in lines)}\n"
    return p, {p["file"]: "\n".join(lines) + "\n"}, expected, wrong


def _csv(rng: random.Random, cols: list[str], rows: int, extra: dict[str, list[str]]) -> list[list]:
    table = [cols]
    for i in range(rows):
        table.append([extra[c][i] if c in extra else _cell(c, rng, i) for c in cols])
    return table


def _text(table: list[list[str]]) -> str:
    return "".join(",".join(r) + "\n" for r in table)


def _column_values(rng: random.Random, one_slot: bool) -> tuple[dict, dict[str, str], str, str]:
    cols = rng.sample(COLUMNS, 4)
    fld = rng.choice(cols[1:])
    stem, out = _names(rng, "column-values", one_slot)
    table = _csv(rng, cols, rng.randint(6, 12), {})
    idx = cols.index(fld)
    p = {"file": f"{stem}.csv", "field": fld, "out": out}
    expected = "".join(r[idx] + "\n" for r in table[1:])
    return p, {p["file"]: _text(table)}, expected, fld + "\n" + expected


def _filter_rows(rng: random.Random, one_slot: bool) -> tuple[dict, dict[str, str], str, str]:
    value, other = rng.choice(STATUS_PAIRS)
    cols = [*rng.sample([c for c in COLUMNS if c != "email"], 2), "status"]
    rng.shuffle(cols)
    n = rng.randint(6, 12)
    statuses = [rng.choice((value, other, "new")) for _ in range(n)]
    statuses[rng.randrange(n)], statuses[rng.randrange(n)] = value, other
    table = _csv(rng, cols, n, {"status": statuses})
    idx = cols.index("status")
    stem, out = _names(rng, "filter-rows", one_slot)
    p = {"file": f"{stem}.csv", "field": "status", "value": value, "out": out}
    head = ",".join(cols) + "\n"
    expected = head + "".join(",".join(r) + "\n" for r in table[1:] if r[idx] == value)
    wrong = head + "".join(",".join(r) + "\n" for r in table[1:] if value in ",".join(r))
    return p, {p["file"]: _text(table)}, expected, wrong


_BUILD = {"count-word": _count_word, "column-values": _column_values, "filter-rows": _filter_rows}
_FIND = 'NR==1{for(i=1;i<=NF;i++)if($i == "%s")c=i'


def _commands(family: str, p: dict[str, str]) -> dict[str, object]:
    """Oracle, wrong, check and explore commands of one instance (absolute paths). Each is
    short (a policy samples every token of it at temperature 1) and the wrong candidate is one
    plausible slip from the oracle (``-i``, the header kept, a substring match)."""
    f, out = f"/app/{p['file']}", f"/app/{p['out']}"
    if family == "count-word":
        w = p["word"]
        return {
            "oracle": f"grep -c '{w}' {f} > {out}",
            "wrong": f"grep -ci '{w}' {f} > {out}",
            "check": f"grep -c '{w}' {f} | diff - {out}",
            "explore": ["ls", f"head -5 {f}", f"wc -l {f}"],
        }
    if family == "column-values":
        find = _FIND % p["field"]
        return {
            "oracle": f"awk -F, '{find};next}}{{print $c}}' {f} > {out}",
            "wrong": f"awk -F, '{find}}}{{print $c}}' {f} > {out}",
            "check": f"awk -F, '{find};next}}{{print $c}}' {f} | diff - {out}",
            "explore": ["ls", f"head -3 {f}", f"wc -l {f}"],
        }
    v = p["value"]
    return {
        "oracle": f"{{ head -n 1 {f}; grep -w '{v}' {f}; }} > {out}",
        "wrong": f"{{ head -n 1 {f}; grep '{v}' {f}; }} > {out}",
        "check": f"{{ head -n 1 {f}; grep -w '{v}' {f}; }} | diff - {out}",
        "explore": ["ls", f"head -3 {f}", f"wc -l {f}"],
    }


def _instruction(family: str, p: dict[str, str]) -> str:
    """The instruction states each parameter as the commands write it (`` /app/jobs.csv``,
    ``'timeout'``, ``"score"``), so copying it is one look-up in the same local context (the
    kind of copy a tiny transformer learns first) rather than a learned translation."""
    f, out = f"/app/{p['file']}", f"/app/{p['out']}"
    if family == "count-word":
        return (f"Count the lines of {f} that contain the word '{p['word']}' (exact case: "
                f"`{p['word'].capitalize()}` does not count) and write just that number to "
                f"{out}.\n")  # fmt: skip
    if family == "column-values":
        return (f'Write the values of the "{p["field"]}" column of the CSV file {f} to '
                f"{out}: one value per line, in file order, without the header line.\n")  # fmt: skip
    return (f'Write the rows of the CSV file {f} whose "{p["field"]}" field is exactly '
            f'"{p["value"]}" to {out}: the header line first, then the matching rows in file '
            f"order, unchanged.\n")  # fmt: skip


def _script(cmd: str, note: str) -> str:
    return f"#!/usr/bin/env bash\n# {note}\ncd /app\n{cmd}\n"


_TEST_SH = """#!/usr/bin/env bash
# Hidden evaluator: the output must equal the expected answer (a missing final newline is fine).
# A pipeline, not a process substitution: bash waits for every stage of a pipeline, while a
# substituted process may outlive the script, which the verifier counts against the run.
mkdir -p /logs/verifier
if [ -f /app/{out} ] && sed -e '$a\\' /app/{out} | diff - /tests/expected.txt > /dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def _toml(family: str, c: dict[str, object]) -> str:
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    explore = ", ".join(q(e) for e in c["explore"])  # type: ignore[union-attr]
    return (f'version = "1.0"\n\n[metadata]\nauthor_name = "agentpost lab"\n'
            f'difficulty = "easy"\ncategory = "lab-{family}"\ntags = ["lab", "generated"]\n\n'
            f"[verifier]\ntimeout_sec = 30.0\n\n[agent]\ntimeout_sec = 300.0\n\n"
            f"[environment]\nallow_internet = false\n\n[agentpost]\nexplore = [{explore}]\n"
            f"check = {q(str(c['check']))}\n")  # fmt: skip


def generate(family: str, rng: random.Random, task_id: str, one_slot: bool = False) -> TaskFiles:
    """One instance of ``family``; rerolls until the wrong candidate is really wrong."""
    while True:
        p, env, expected, wrong = _BUILD[family](rng, one_slot)
        if expected != wrong and expected.strip() not in ("", "0"):
            break
    c = _commands(family, p)
    files = {
        "instruction.md": _instruction(family, p),
        "task.toml": _toml(family, c),
        "tests/test.sh": _TEST_SH.replace("{out}", p["out"]),
        "tests/expected.txt": expected,
        "solution/solve.sh": _script(str(c["oracle"]), "Oracle solution."),
        "wrong/solve.sh": _script(str(c["wrong"]), "A plausible WRONG solution."),
        "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\nCOPY . /app/\n",
    }
    files.update({f"environment/{k}": v for k, v in env.items()})
    return TaskFiles(task_id, family, p, files)


def family_split(
    seed: int, n_train: int, n_heldout: int, families: tuple[str, ...] = FAMILIES,
    one_slot: bool = False,
) -> dict[str, list[TaskFiles]]:  # fmt: skip
    """``{"train": [...], "heldout": [...]}``: instances cycling through ``families`` (with
    ``one_slot``, file and output names fixed per family: ``ONE_SLOT``), each
    split from its own seeded stream; an instance whose parameters and data repeat one already
    drawn is drawn again, so no held-out task is a copy of a train task."""
    seen: set[tuple] = set()
    out: dict[str, list[TaskFiles]] = {}
    for split, n in (("train", n_train), ("heldout", n_heldout)):
        rng = random.Random(f"agentpost-lab:{seed}:{split}")
        tasks = []
        for i in range(n):
            fam = families[i % len(families)]
            while True:
                t = generate(fam, rng, f"{split}-{fam}-{i:03d}", one_slot)
                sig = (t.key, t.files["tests/expected.txt"])
                if sig not in seen:
                    seen.add(sig)
                    break
            tasks.append(t)
        out[split] = tasks
    return out
