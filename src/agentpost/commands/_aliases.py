"""Old spellings of options, kept working but out of the help: one CLI language.

The language is the table in CONTRIBUTING.md ("One name per idea"); tests/test_cli_language.py
checks it on every command. Older spellings are rewritten here, before typer parses the command
line, so they stay accepted (until 0.3) without appearing in any ``--help``; each use prints one
``warning:`` line naming the new spelling.

Layer: edges.
"""

from __future__ import annotations

# command path → {old option: new option}
OPTIONS: dict[tuple[str, ...], dict[str, str]] = {
    ("run",): {"--tasks": "--suite", "--attempts": "--group-size", "--concurrency": "--workers",
               "-n": "--workers"},
    ("demo",): {"--attempts": "--group-size"},
    ("diagnose",): {"--tasks": "--suite", "--n-boot": "--bootstrap",
                    "--replay-concurrency": "--workers"},
    ("tasks", "check"): {"--id": "--task"},
    ("scvd", "metrics"): {"--n-boot": "--bootstrap"},
    ("scvd", "collect"): {"--tasks": "--suite", "--concurrency": "--workers"},
    ("scvd", "ftd"): {"--tasks": "--suite", "--concurrency": "--workers",
                      "--attempts": "--group-size"},
    ("security", "route"): {"--endpoint": "--base-url", "--agent": "--policy"},
    ("security", "demo"): {"--agent": "--policy"},
    ("security", "build-suite"): {"--teacher-model": "--teacher"},
    ("security", "hg"): {"--teacher": "--teacher-weights"},
    ("lab", "hero"): {"--group": "--group-size"},
}  # fmt: skip
# commands whose suite used to be the first positional argument: `tasks list SUITE`
POSITIONAL_SUITE = {("tasks", "list"), ("tasks", "check"), ("security", "check")}
GROUPS = {"tasks", "hero", "scvd", "security", "sandbox", "images", "lab", "train"}


def _command(argv: list[str]) -> tuple[tuple[str, ...], int]:
    """The command path at the start of ``argv`` and how many words it takes."""
    if not argv:
        return (), 0
    if argv[0] in GROUPS and len(argv) > 1 and not argv[1].startswith("-"):
        return (argv[0], argv[1]), 2
    return (argv[0],), 1


def rewrite_warn(argv: list[str]) -> tuple[list[str], list[str]]:
    """``argv`` (without the program name) with old spellings replaced by the current ones, and
    one warning per old spelling used."""
    path, n = _command(argv)
    head, rest = argv[:n], argv[n:]
    table = OPTIONS.get(path, {})
    out: list[str] = []
    warnings: list[str] = []
    for i, word in enumerate(rest):
        if word == "--" or (i and rest[i - 1] == "--"):
            out += rest[i:]
            break
        name, eq, value = word.partition("=")
        if name in table:
            new = table[name]
            warnings.append(
                f"{' '.join(path)} {name} is an old name: use {new} (it will go in 0.3)"
            )
            out.append(new + eq + value)
        else:
            out.append(word)
    if path in POSITIONAL_SUITE and "--suite" not in out and out and not out[0].startswith("-"):
        out = ["--suite", *out]
    return head + out, warnings


def rewrite(argv: list[str]) -> list[str]:
    """``argv`` with old spellings replaced (the warnings dropped)."""
    return rewrite_warn(argv)[0]
