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
