"""What a trajectory's task is about: the task kind, the work root and the files the instruction
names, read from the instruction and the scaffold's known layout.

SCVD's candidate is a change to what the task is about (issue 29; ``data/real-labels.md`` section
1): for a SWE task (a repository and an issue about its code) the repository's tracked files, for
a terminal task or a developer's session request the outputs the instruction names. ``Layout``
carries what the judges need to tell those apart from set-up, scratch and fixture files:

- ``kind``: ``swe`` | ``terminal`` | ``session``;
- ``root``: the working directory relative paths are read against (``/testbed`` for SWE-bench
  images, SWE-agent's ``(Current directory: ...)``, OpenHands' ``/workspace/<repo>``, ``/app`` for
  Terminal-Bench/Harbor, the project directory of a Claude Code or Gemini CLI session);
- ``named``: file names and paths the instruction mentions (``hello.txt``, ``SECRETS.md``,
  ``.github/CODEOWNERS``).

Every input is recorded text (hostile data): nothing here touches the file system.

Layer: pure.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from agentpost.trajectory.model import Trajectory

SWE_MARKERS = re.compile(
    r"<pr_description>|<issue_description>|<uploaded_files>|\bISSUE:|# Problem Statement|"
    r"Consider the following (?:PR|issue) description|fix the following issue|"
    r"solving the following issue|[Uu]ploaded a (?:\w+ )*(?:code )?repository"
)
SESSION_AGENTS = ("claude-code", "gemini-cli", "codex")
_CWD = re.compile(r"\(Current directory: (/[^)\s]*)\)")
_UPLOADED = re.compile(r"<uploaded_files>\s*(/\S+)")
_WORKSPACE = re.compile(r"repository (?:in|at) (/[\w./-]+)")
# a file-like token: a path with a slash, a name with a file extension, or a known bare name
_EXT = (
    r"(?:txt|md|rst|py|pyx|js|ts|tsx|jsx|json|ya?ml|toml|cfg|ini|c|h|cc|cpp|hpp|go|rs|rb|"
    r"java|kt|sh|bash|html?|css|csv|tsv|xml|log|sql|pony|lock|mod|sum|env|conf|tex|r|php|"
    r"swift|scala|lua|pl|ipynb|db|out|tar|gz|zip|pdf|png|jpg|svg)"
)
_NAMED = re.compile(
    r"(?<![\w/.-])((?:\.{0,2}/)?(?:[\w.-]+/)*[\w.-]*\." + _EXT + r"|(?:\.?[\w-]+/)+[\w.-]+|"
    r"LICENSE|README|Makefile|Dockerfile|CODEOWNERS)(?![\w/-])",
    re.I,
)
_NOT_FILES = {"e.g", "i.e", "etc", "vs", "a.m", "p.m"}


@dataclass(frozen=True)
class Layout:
    kind: str  # swe | terminal | session
    root: str | None  # absolute work directory, when known
    named: frozenset[str]

    def rel(self, path: str) -> str:
        """``path`` relative to the work root when it lies inside it (normalised, no ``..``);
        absolute paths outside the root stay absolute."""
        p = path.strip().strip("'\"")
        if not p:
            return p
        if p.startswith("~"):
            return p
        if self.root and p.startswith("/"):
            root = self.root.rstrip("/")
            if p == root:
                return "."
            if p.startswith(root + "/"):
                p = p[len(root) + 1 :]
            else:
                return posixpath.normpath(p)
        elif p.startswith("/"):
            return posixpath.normpath(p)
        return posixpath.normpath(p)

    def inside(self, path: str) -> bool:
        """Whether ``path`` (as returned by ``rel``) is inside the work root."""
        return not (path.startswith("/") or path.startswith("~") or path.startswith(".."))

    def is_named(self, path: str) -> bool:
        """The instruction names this file: by path, by its base name, or (a bare name without
        an extension, ``LICENSE``, ``README``) by its stem. Case is ignored: instructions are prose
        ("add an MIT license", "update the readme") and name ``LICENSE`` or ``README.md``."""
        rel = self.rel(path).casefold()
        base = rel.rsplit("/", 1)[-1]
        named = {self.rel(n).casefold() for n in self.named}
        return (
            rel in named
            or base in named
            or self.names_project_file(path)
            or any(n.endswith("/" + base) and rel.endswith(n) for n in named)
        )

    def names_project_file(self, path: str) -> bool:
        """The instruction names this file by a bare project-file name (``LICENSE``, ``README``,
        ``Makefile``, ``Dockerfile``, ``CODEOWNERS``, any case, with or without an extension)."""
        base = self.rel(path).casefold().rsplit("/", 1)[-1]
        bare = {n.casefold() for n in self.named if "." not in n and "/" not in n}
        return base.split(".", 1)[0] in bare


def _root(traj: Trajectory, text: str) -> str | None:
    for rx in (_CWD, _UPLOADED):
        m = rx.search(text)
        if m:
            return m.group(1).rstrip("/.")
    m = _WORKSPACE.search(text)
    if m:
        return m.group(1).rstrip("/.")
    if "/testbed" in text or "<pr_description>" in text:
        return "/testbed"
    if (traj.agent or "").startswith("terminus") or "/app" in text:
        return "/app"
    return None


def _session_root(traj: Trajectory) -> str | None:
    """The deepest directory holding every absolute path a session's calls name (a single path:
    its directory)."""
    dirs = []
    for turn in traj.turns:
        for call in turn.tool_calls:
            args = call.arguments if isinstance(call.arguments, dict) else {}
            for key in ("file_path", "path", "absolute_path", "dir_path"):
                v = args.get(key)
                if isinstance(v, str) and v.startswith("/"):
                    dirs.append(posixpath.dirname(posixpath.normpath(v)))
    if not dirs:
        return None
    root = posixpath.commonpath(dirs)
    return None if root == "/" else root


def named_files(text: str) -> frozenset[str]:
    out = set()
    for m in _NAMED.finditer(text or ""):
        tok = m.group(1).strip(".,;:`'\"()[]")
        if not tok or tok.lower() in _NOT_FILES or tok.startswith("http") or "://" in tok:
            continue
        if re.fullmatch(r"[\d.]+", tok) or re.fullmatch(r"v?\d+(\.\d+)+\w*", tok):
            continue  # a version number
        out.add(tok.lstrip("./") if tok.startswith("./") else tok)
    return frozenset(out)


def task_text(traj: Trajectory) -> str:
    """The part of the instruction that states the task (mini-swe-agent's template after
    ``<instructions>`` and SWE-agent's tool documentation are left out)."""
    text = traj.instruction or ""
    for cut in ("<instructions>", "\nINSTRUCTIONS:\n", "Format your response as JSON"):
        if cut in text and text.index(cut) > 40:
            text = text.split(cut, 1)[0]
            break
    if "Task Description:" in (traj.instruction or ""):
        text = (
            (traj.instruction or "")
            .split("Task Description:", 1)[1]
            .split("Current terminal state:", 1)[0]
        )
    return text


def layout_of(traj: Trajectory) -> Layout:
    """The task's layout, read from the instruction and the scaffold."""
    full = traj.instruction or ""
    text = task_text(traj)
    agent = (traj.agent or "").lower()
    if SWE_MARKERS.search(full):
        kind = "swe"
    elif any(agent.startswith(a) for a in SESSION_AGENTS):
        kind = "session"
    else:
        kind = "terminal"
    root = _session_root(traj) if kind == "session" else _root(traj, full)
    if root is None:
        root = _session_root(traj)
    return Layout(kind, root, named_files(text))
