"""A chronologically clean copy of a repository at ``base_commit``, made from a local clone.

SWE-bench's harness clones the repository, resets to ``base_commit``, deletes later tags, expires
the reflog and prunes, so an agent cannot read the answer from the history. Here the copy is a
new repository that fetches ``base_commit`` alone from the user's clone or mirror (``git fetch
MIRROR SHA``): only the commit's ancestry is transferred, so no later commit, branch, stash,
note or packed object of the source ever enters it. Tags pointing into that ancestry are kept
(as lightweight tags: setuptools-scm versions and ``git describe`` need them), one branch named
like the source's default branch points at ``base_commit``, and there is no remote, no
``FETCH_HEAD``, no reflog. ``verify`` checks all of that on the result.

Departure from the harness: tags are kept when they point at an ancestor of ``base_commit``
(the harness keeps those whose commit is not newer by date), and annotated tags become
lightweight ones (their tag objects, dated when the tag was made, are not copied).

The source is read only (``git fetch`` from it); nothing is written to it.

Layer: io.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from agentpost.errors import InfraError, InputError

GIT_TIMEOUT_S = 900.0
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_NAME": "agentpost",
    "GIT_AUTHOR_EMAIL": "agentpost@localhost",
    "GIT_COMMITTER_NAME": "agentpost",
    "GIT_COMMITTER_EMAIL": "agentpost@localhost",
}


def git(*args: str, cwd: str | Path | None = None, check: bool = True) -> str:
    env = {**os.environ, **_ENV, "HOME": os.environ.get("HOME", "/root")}
    try:
        out = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
            env=env,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InfraError(f"git {args[0]}: {e}") from None
    if check and out.returncode != 0:
        raise InfraError(f"git {' '.join(args[:3])} failed: {out.stderr.strip()[-600:]}")
    return out.stdout


def resolve_commit(source: Path, sha: str, where: str) -> str:
    """The full id of commit ``sha`` in ``source``; an ``InputError`` when it is not there."""
    out = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if out.returncode != 0:
        raise InputError(source, where, f"commit {sha} is not in this repository")
    return out.stdout.strip()


def _default_branch(source: Path) -> str:
    out = git("-C", str(source), "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    name = out.strip().rsplit("/", 1)[-1]
    return name if name and name.replace("-", "").replace("_", "").isalnum() else "main"


def clean_copy(source: Path, base_commit: str, dest: Path) -> str:
    """Make ``dest`` (removed first) a clean repository checked out at ``base_commit``; returns
    the full commit id."""
    sha = resolve_commit(source, base_commit, "base_commit")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    branch = _default_branch(source)
    git("init", "-q", "-b", branch, str(dest))
    git("fetch", "-q", "--no-tags", "--no-write-fetch-head", "--update-head-ok", str(source.resolve()),
        f"{sha}:refs/heads/{branch}", cwd=dest)  # fmt: skip
    ancestors = set(git("rev-list", sha, cwd=dest).split())
    tags = git("-C", str(source), "for-each-ref", "refs/tags",
               "--format=%(refname) %(objectname) %(*objectname)")  # fmt: skip
    updates = []
    for line in tags.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-1] in ancestors:
            updates.append(f"create {parts[0]} {parts[-1]}\n")
    if updates:
        subprocess.run(["git", "update-ref", "--stdin"], cwd=dest, input="".join(updates),
                       text=True, check=True, capture_output=True, timeout=600)  # fmt: skip
    git("checkout", "-q", "-f", branch, cwd=dest)
    git("reflog", "expire", "--expire=now", "--all", cwd=dest)
    git("gc", "-q", "--prune=now", cwd=dest)
    shutil.rmtree(dest / ".git" / "logs", ignore_errors=True)
    for name in ("FETCH_HEAD", "ORIG_HEAD"):
        (dest / ".git" / name).unlink(missing_ok=True)
    verify(dest, sha)
    return sha


def verify(repo: Path, base_commit: str) -> None:
    """Raise ``InfraError`` unless every ref, and every object, of ``repo`` is ``base_commit`` or
    older in its ancestry, with no remote and no stash."""
    later = git("rev-list", "--all", "--not", base_commit, cwd=repo).split()
    if later:
        raise InfraError(f"{repo}: {len(later)} commits after base_commit are reachable")
    if git("remote", cwd=repo).strip():
        raise InfraError(f"{repo}: a remote is configured")
    reachable = set(git("rev-list", "--objects", "--all", cwd=repo).split("\n"))
    reachable = {line.split(" ", 1)[0] for line in reachable if line}
    stored = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo)
    extra = set(stored.split()) - reachable
    if extra:
        raise InfraError(f"{repo}: {len(extra)} stored objects are unreachable from base_commit")
