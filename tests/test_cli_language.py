"""One CLI language across every command (issue 16 item 6), checked on the typer app itself so
that a new command or option that drifts from it fails CI:

- what a command writes is ``-o/--out`` (both spellings, always together);
- a task suite is ``--suite`` (a path or a bundled name), never a positional argument or
  ``--tasks``; task ids are ``--task``; older spellings work as hidden aliases only;
- every command that prints results has ``--json`` (a short list says why the others need none);
- ``agentpost --version``; help texts carry no Python reprs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import typer.main

from agentpost import __version__, cli
from agentpost.commands._aliases import OPTIONS, rewrite

CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]
# commands that print no results of their own, or only JSON, and why
NO_JSON = {
    "show": "renders one trajectory for reading; the canonical JSONL is its JSON",
    "demo": "prints the report path; every stage writes its JSON",
    "report": "prints the report path",
    "sandbox exec": "passes the sandboxed command's own output and exit code through",
    "security hint": "prints the hint text itself",
    "security demo": "always prints JSON",
    "security annotate": "always prints JSON",
    "security build-suite": "always prints JSON",
    "security rl": "always prints JSON",
    "security hg": "always prints JSON",
}
TRAJECTORY_ID = {"show", "replay"}  # where --id names a trajectory, not a task
# the one task a command acts on, as its subject (like the file of `show`), not a task filter
TASK_SUBJECT = {"security grade", "security hint"}
SUITE_WORDS = re.compile(r"suite (directory|name)|bundled suite name")
TASK_ID_WORDS = re.compile(r"\btask ids?\b")


def _leaves():
    cli._register()
    root = typer.main.get_command(cli.app)

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), cmd

    return list(walk(root, []))


def _visible(cmd):
    return [p for p in cmd.params if not getattr(p, "hidden", False)]


def test_out_is_always_dash_o_and_double_dash_out() -> None:
    bad = []
    for name, cmd in _leaves():
        for p in _visible(cmd):
            names = set(p.opts) | set(p.secondary_opts)
            if ("-o" in names) != ("--out" in names):
                bad.append(f"{name}: {sorted(names)}")
    assert not bad, bad


def test_suites_are_dash_dash_suite_and_task_ids_dash_dash_task() -> None:
    bad = []
    for name, cmd in _leaves():
        for p in _visible(cmd):
            names = set(p.opts)
            words = (getattr(p, "help", None) or "").lower()
            positional = p.param_type_name == "argument"
            if positional and name in TASK_SUBJECT and p.name == "task":
                continue
            if positional and (SUITE_WORDS.search(words) or "suite" in p.name):
                bad.append(f"{name}: suite as a positional argument {p.name}")
            if "--tasks" in names:
                bad.append(f"{name}: --tasks (use --suite)")
            if SUITE_WORDS.search(words) and "--suite" not in names:
                bad.append(f"{name}: {sorted(names)} takes a suite but is not --suite")
            if TASK_ID_WORDS.search(words) and not {"--task", "--suite"} & names:
                bad.append(f"{name}: {sorted(names)} takes task ids but is not --task")
            if "--id" in names and name not in TRAJECTORY_ID:
                bad.append(f"{name}: --id (task ids are --task)")
    assert not bad, "\n".join(bad)


def test_every_command_that_prints_results_has_json() -> None:
    leaves = dict(_leaves())
    assert set(NO_JSON) <= set(leaves), set(NO_JSON) - set(leaves)
    missing = [n for n, c in leaves.items()
               if n not in NO_JSON and "--json" not in {o for p in c.params for o in p.opts}]  # fmt: skip
    assert not missing, missing


def test_help_texts_carry_no_python_reprs() -> None:
    reprs = re.compile(r"\[\'|\{\'|<[a-z_.]+ object at|\bNone\b(?! ?\()")
    bad = []
    for name, cmd in _leaves():
        for text in [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]:
            if reprs.search(text):
                bad.append(f"{name}: {text[:80]}")
    assert not bad, bad


def test_old_spellings_are_hidden_aliases() -> None:
    assert rewrite(["run", "--tasks", "terminal", "-o", "x"]) == [
        "run",
        "--suite",
        "terminal",
        "-o",
        "x",
    ]
    assert rewrite(["diagnose", "t.jsonl", "--tasks=s"]) == ["diagnose", "t.jsonl", "--suite=s"]
    assert rewrite(["tasks", "check", "S", "--id", "a"]) == [
        "tasks",
        "check",
        "--suite",
        "S",
        "--task",
        "a",
    ]
    assert rewrite(["tasks", "list", "--json"]) == ["tasks", "list", "--json"]
    assert rewrite(["show", "f", "--id", "x"]) == ["show", "f", "--id", "x"]  # a trajectory id
    helped = subprocess.run([*CLI, "run", "--help"], capture_output=True, text=True, timeout=60)
    assert "--suite" in helped.stdout and "--tasks" not in helped.stdout
    for path, table in OPTIONS.items():
        text = subprocess.run([*CLI, *path, "--help"], capture_output=True, text=True,
                              timeout=60).stdout  # fmt: skip
        assert not [old for old in table if re.search(rf"{old}\b(?!-)", text)], (path, text)
    old = subprocess.run([*CLI, "tasks", "list", "terminal", "--json"], capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    new = subprocess.run([*CLI, "tasks", "list", "--suite", "terminal", "--json"],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert old.returncode == 0 and old.stdout == new.stdout and '"tasks"' in new.stdout


def test_version() -> None:
    proc = subprocess.run([*CLI, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == f"agentpost {__version__}"


def test_error_messages_list_choices_in_words_not_reprs(tmp_path) -> None:
    (tmp_path / "r.jsonl").write_text("")
    cases = [
        ["run", "--policy", "nope", "-o", str(tmp_path / "r")],
        ["sandbox", "exec", "--backend", "nope", "--", "true"],
        ["diagnose", str(tmp_path / "r.jsonl"), "--ica-population", "x", "-o", str(tmp_path / "d")],
    ]
    for args in cases:
        proc = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert not re.search(r"\[\'|\(\'|\{\'", proc.stderr), (args, proc.stderr)
        assert re.search(r"choose from|must be one of", proc.stderr), (args, proc.stderr)


# ---- issue 30 item 4: one name per idea (the table in CONTRIBUTING.md, "One name per idea") ----
# idea → (the one name, old names that stay accepted as hidden aliases with a warning)
IDEAS = {
    "endpoint": ("--base-url", ["--endpoint"]),
    "teacher": ("--teacher", ["--teacher-model"]),
    "teacher weights": ("--teacher-weights", []),
    "policy": ("--policy", []),
    "agent": ("--agent", []),
    "group size": ("--group-size", ["--attempts", "--group"]),
    "parallelism": ("--workers", ["--concurrency", "--replay-concurrency", "-n"]),
    "bootstrap": ("--bootstrap", ["--n-boot"]),
    "suite": ("--suite", ["--tasks"]),
    "run name": ("--name", []),
}
# words in an option's help that say which idea it is
IDEA_WORDS = {
    "endpoint": re.compile(r"endpoint|base url|openai-compatible", re.I),
    "policy": re.compile(r"scripted (reference )?polic", re.I),
    "group size": re.compile(r"rollouts per (task|prompt)", re.I),
    "parallelism": re.compile(r"at once|at a time|concurrent", re.I),
    "bootstrap": re.compile(r"resamples|bootstrap replicates", re.I),
}
# commands that read trajectories (files or a run directory) take --agent and --task filters
READS_TRAJECTORIES = {"stats", "show", "efficiency", "hero groups", "hero advantages", "diagnose",
                      "scvd collect", "security annotate", "summary", "report"}  # fmt: skip
TRAJECTORY_WORDS = re.compile(r"trajector|canonical jsonl|run directory", re.I)
# ... and why these, whose arguments mention trajectories too, take no filter
NO_FILTER = {
    "import": "writes trajectories from logs (its --name labels them); filter what it wrote",
    "replay": "acts on one trajectory (--id), as show does",
    "compare": "names the agent of each side (--agent-a, --agent-b) and takes --task",
    "security attribute": "reads label records, not trajectories",
    "security metrics": "reads graded samples, not trajectories",
    "scvd metrics": "reads SCVD records, not trajectories",
    "scvd calibrate": "reads labels and judge annotations",
}
TYPE_TAG = re.compile(r"<(bool|int|float|str|path|list\[[^\]]*\]|dict[^>]*|tuple[^>]*)>", re.I)
PAPER_REF = re.compile(r"\b(?:spec [a-z]\.\d+|Table \d+)")


def _help_text(path: str) -> str:
    from click.testing import CliRunner

    res = CliRunner().invoke(cli.command(), [*path.split(), "--help"], prog_name="agentpost",
                             terminal_width=200)  # fmt: skip
    assert res.exit_code == 0, (path, res.output)
    return res.output


def test_one_name_per_idea_and_old_names_hidden_with_a_warning() -> None:
    from agentpost.commands._aliases import rewrite_warn

    old = {o for _, olds in IDEAS.values() for o in olds}
    bad = []
    for name, cmd in _leaves():
        for p in _visible(cmd):
            names = set(p.opts) | set(p.secondary_opts)
            words = getattr(p, "help", None) or ""
            if names & old:
                bad.append(f"{name}: {sorted(names & old)} is an old name")
            for idea, pattern in IDEA_WORDS.items():
                one = IDEAS[idea][0]
                related = names & {"--api-key-env", "--seed", "--model"}  # about it, not it
                if (
                    p.param_type_name == "option"
                    and pattern.search(words)
                    and not (names & {one} or related)
                ):
                    bad.append(f"{name}: {sorted(names)} ({words[:50]!r}) is {idea}: use {one}")
            if "--group-size" in names and "-G" not in names:
                bad.append(f"{name}: --group-size without its short form -G")
            if "--agent" in names and "verdict names it" not in words:
                bad.append(f"{name}: --agent is the trajectory filter only (a policy is --policy)")
            if "--bootstrap" in names and p.default not in (1000, None):
                bad.append(f"{name}: --bootstrap defaults to {p.default}, not intervals.RESAMPLES")
    assert not bad, "\n".join(bad)
    for path, table in OPTIONS.items():  # every old spelling still works, and says so
        for old_name, new in table.items():
            argv, warnings = rewrite_warn([*path, old_name, "x"])
            assert argv == [*path, new, "x"] and len(warnings) == 1 and new in warnings[0]
    contributing = (Path(__file__).parents[1] / "CONTRIBUTING.md").read_text()
    table = contributing[contributing.index("## One name per idea") :]
    for one, olds in IDEAS.values():
        assert f"`{one}" in table and all(f"`{o}`" in table for o in olds), one


def test_an_old_name_prints_a_warning_and_still_works(tmp_path) -> None:
    proc = subprocess.run([*CLI, "scvd", "metrics", str(tmp_path / "none.jsonl"), "--n-boot", "5"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert "warning: scvd metrics --n-boot is an old name: use --bootstrap" in proc.stderr
    assert "none.jsonl" in proc.stderr and "no such option" not in proc.stderr.lower()


def test_every_command_that_reads_trajectories_filters_by_agent_and_task() -> None:
    leaves = dict(_leaves())
    assert READS_TRAJECTORIES <= set(leaves)
    for name in READS_TRAJECTORIES:
        opts = {o for p in leaves[name].params for o in p.opts}
        assert {"--agent", "--task"} <= opts, name
    readers = {n for n, c in leaves.items()
               if any(TRAJECTORY_WORDS.search(getattr(p, "help", None) or "")
                      for p in c.params if p.param_type_name == "argument")}  # fmt: skip
    assert readers <= READS_TRAJECTORIES | set(NO_FILTER), readers - READS_TRAJECTORIES


def test_help_names_no_python_type_and_every_option_says_what_it_does() -> None:
    """No `<bool>` on flags, no `<list[Path]>`; help on every option; a paper reference says,
    in words, what it refers to (which method's spec, and what the section is about)."""
    bad = []
    for name, cmd in _leaves():
        text = _help_text(name)
        bad += [f"{name}: {m.group(0)} in --help" for m in TYPE_TAG.finditer(text)]
        for p in cmd.params:
            words = getattr(p, "help", None) or ""
            if not words.strip() and not getattr(p, "hidden", False):
                bad.append(f"{name}: {p.opts or p.name} has no help")
        for words in [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]:
            for m in PAPER_REF.finditer(words):
                before, after = (
                    words[max(0, m.start() - 60) : m.start()],
                    words[m.end() : m.end() + 80],
                )
                if (
                    not re.search(r"HERO|SCVD|SecureVibe", before)
                    or len(re.findall(r"[a-z]{3,}", before + after)) < 6
                ):
                    bad.append(f"{name}: {m.group(0)!r} is not explained in words: {words[:120]!r}")
    for group in ("", "hero", "scvd", "security", "tasks", "lab", "sandbox", "images", "train"):
        bad += [
            f"{group or 'agentpost'}: {m.group(0)}" for m in TYPE_TAG.finditer(_help_text(group))
        ]
    assert not bad, "\n".join(bad)


def test_one_resample_count_in_the_package() -> None:
    """Every bootstrap count defaults to intervals.RESAMPLES: no other number is written as a
    count in the package (0, "no interval", aside; the lab's smoke configs are a few-minute CI
    variant and say so)."""
    src = Path(__file__).parents[1] / "src" / "agentpost"
    literal = re.compile(r"\bn_boot(?::\s*int)?\s*=\s*([1-9]\d*)")
    bad = [f"{p.relative_to(src)}:{n}: {line.strip()}"
           for p in src.rglob("*.py") for n, line in enumerate(p.read_text().splitlines(), 1)
           if literal.search(line) and "smoke" not in line and p.parts[-2] != "lab"]  # fmt: skip
    assert not bad, "\n".join(bad)
