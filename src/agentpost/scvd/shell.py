"""Shell-command reading for the heuristic annotator: split a command into segments and say
what each does (modifies state, runs a check, inspects, other) and which files it writes.

This is a reader of recorded text, not a shell parser: quotes and heredocs are respected well
enough to keep ``python3 -c "a; b"`` and a ``cat > f <<'EOF' ... EOF`` block in one segment;
anything it cannot classify is ``other``.

Layer: pure.
"""

from __future__ import annotations

import re
import shlex

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_REDIRECT = re.compile(r"(?<![<>&0-9])(?:[0-9]?>>?|&>)\s*([^\s;&|<>()]+)")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_INLINE_WRITE = re.compile(
    r"open\([^)]*['\"][wax]b?\+?['\"]|\.write\(|\.write_text\(|json\.dump\(|\.to_csv\(|"
    r"shutil\.(copy|move|rmtree)|os\.(remove|rename|unlink|makedirs|mkdir)|writeFileSync|"
    r"\.save\(|fs\.write"
)
_WRITE_TARGET = re.compile(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wa]")

MODIFY = {"cp", "mv", "rm", "mkdir", "touch", "chmod", "chown", "ln", "patch", "install", "tee",
          "truncate", "dd", "rsync", "unzip", "crontab", "useradd", "rmdir", "gzip", "gunzip"}  # fmt: skip
RUN = {"pytest", "python", "python3", "node", "bash", "sh", "test", "[", "[[", "diff", "cmp",
       "curl", "wget", "jq", "sqlite3", "java", "ruby", "perl", "shellcheck", "ruff", "flake8",
       "mypy", "go", "cargo", "npm", "make", "tox", "unittest", "nc", "psql", "mysql",
       "bats", "php", "Rscript", "gcc", "g++", "cc", "clang"}  # fmt: skip
INSPECT = {"cat", "head", "tail", "less", "more", "ls", "grep", "egrep", "fgrep", "rg", "stat",
           "wc", "file", "find", "tree", "od", "xxd", "hexdump", "du", "md5sum", "sha256sum",
           "ps", "pgrep", "awk", "sed", "sort", "uniq", "cut", "column", "git", "systemctl",
           "readlink", "realpath", "nl", "tac", "comm", "printenv", "which", "type", "tar",
           "zcat", "unzip"}  # fmt: skip
CONTROL = re.compile(
    r"COMPLETE_TASK|task_complete|MINI_SWE_AGENT_FINAL_OUTPUT|AGENTPOST_SUBMIT|^\s*(submit|exit)\s*$"
)
RANK = {"other": 0, "inspect": 1, "run": 2, "modify": 3}
SCRATCH = ("/tmp/", "/dev/", "/var/tmp/")
# Files an agent writes to probe the task, not as the deliverable (reproduction scripts, ad-hoc
# tests): writing them is not a modification of the candidate.
PROBE = re.compile(
    r"(^|/)(reproduce|repro|debug|scratch|test_|check_)[^/]*$|(_test|_repro)\.[a-z]+$"
)
_GIT_MODIFY = {"apply", "commit", "am", "merge", "rebase", "checkout", "reset", "cherry-pick",
               "add", "init", "mv", "rm", "stash", "revert", "switch", "restore", "clone", "pull",
               "tag", "branch"}  # fmt: skip


def _strip_quotes(text: str) -> str:
    return re.sub(r"'[^']*'|\"(?:\\.|[^\"\\])*\"", "''", text)


def split_segments(cmd: str) -> list[str]:
    """Split on newlines, ``;``, ``&&``, ``||`` outside quotes; a heredoc body stays with the
    segment that opened it."""
    segs, cur, i, quote = [], [], 0, None
    pending: list[str] = []
    n = len(cmd)
    while i < n:
        ch = cmd[i]
        if quote:
            cur.append(ch)
            if ch == quote and cmd[i - 1] != "\\":
                quote = None
            i += 1
            continue
        if ch == "#" and (i == 0 or cmd[i - 1] in " \t\n;&|("):
            # a comment runs to the end of its line (its apostrophes open no quote)
            while i < n and cmd[i] != "\n":
                i += 1
            continue
        if ch in "'\"":
            quote = ch
        if ch == "\n" or ch == ";" or cmd.startswith("&&", i) or cmd.startswith("||", i):
            line = "".join(cur)
            pending += [m.group(2) for m in _HEREDOC.finditer(_strip_quotes_keep_heredoc(line))]
            if ch == "\n" and pending:
                body, i = _heredoc_body(cmd, i + 1, pending)
                segs.append(line + "\n" + body)
                cur, pending = [], []
                continue
            if ch != "\n" or not line.rstrip().endswith("\\"):
                segs.append(line)
                cur = []
            i += 2 if ch in "&|" else 1
            continue
        cur.append(ch)
        i += 1
    segs.append("".join(cur))
    return [s.strip() for s in segs if s.strip()]


def _strip_quotes_keep_heredoc(line: str) -> str:
    # <<'EOF' must survive quote stripping: protect it first.
    return _HEREDOC.sub(lambda m: f"<<{m.group(2)}", line)


def _heredoc_body(cmd: str, start: int, terminators: list[str]) -> tuple[str, int]:
    """Consume heredoc bodies from ``start``; returns (body text, index after the last one)."""
    lines, i = [], start
    for term in terminators:
        while i <= len(cmd):
            end = cmd.find("\n", i)
            end = len(cmd) if end < 0 else end
            line = cmd[i:end]
            lines.append(line)
            i = end + 1
            if line.strip() == term:
                break
    return "\n".join(lines), i


def _mask_quotes(text: str) -> str:
    """``text`` with the inside of every quoted string replaced by ``_`` (same length)."""
    return re.sub(
        r"'[^']*'|\"(?:\\.|[^\"\\])*\"",
        lambda m: m.group(0)[0] + "_" * (len(m.group(0)) - 2) + m.group(0)[-1],
        text,
    )


def split_words(segment: str) -> list[str]:
    """The words of ``segment``'s first line by shell quoting, less leading ``VAR=...``, ``sudo``,
    ``env``, ``time`` and ``timeout N`` (``seats`` and ``changes`` read commands with it too)."""
    head = segment.split("\n", 1)[0]
    try:
        words = shlex.split(head, comments=True)
    except ValueError:
        words = _strip_quotes(head).split()
    while words and (
        _ASSIGN.match(words[0]) or words[0] in ("sudo", "env", "time", "timeout", "!")
    ):
        words = words[1:]
        if words and re.fullmatch(r"\d+[smh]?", words[0]):  # timeout 10 cmd
            words = words[1:]
    return words


def _targets(segment: str) -> list[str]:
    """Redirect targets outside quotes (a quoted target is read unquoted)."""
    head = _strip_quotes_keep_heredoc(segment.split("\n", 1)[0])
    masked = _mask_quotes(head)
    out = []
    for m in _REDIRECT.finditer(masked):
        raw = head[m.start(1) :]
        q = re.match(r"'([^']*)'|\"((?:\\.|[^\"\\])*)\"|([^\s;&|<>()]+)", raw)
        t = next((g for g in q.groups() if g is not None), "") if q else ""
        if t and not t.startswith(("/dev/", "&")):
            out.append(t)
    return out


def _args(words: list[str]) -> list[str]:
    return [w for w in words[1:] if not w.startswith("-")]


def _modification(words: list[str], part: str) -> list[str] | None:
    """The paths a modifying command writes ([] when unknown), or None when it modifies nothing."""
    w0 = words[0]
    if _targets(part):
        return _targets(part)
    if w0 in MODIFY:
        args = _args(words)
        return args[-1:] if w0 in ("cp", "mv", "install", "rsync", "ln") else args
    if w0 in ("sed", "perl") and any(x.startswith("-i") for x in words[1:]):
        return _args(words)[-1:]
    if w0 == "find" and ("-delete" in words or "-exec" in words and "rm" in words):
        return _args(words)[:1]
    if w0 in ("pip", "pip3", "apt", "apt-get", "npm", "yarn") and "install" in words[1:3]:
        return []
    if w0 == "git" and len(words) > 1 and words[1] in _GIT_MODIFY:
        if words[1] == "branch" and len(words) == 2:
            return None
        return []
    if w0 == "tar" and len(words) > 1 and re.match(r"-?[a-zA-Z]*[cxr]", words[1]):
        return [w for w in words[2:] if re.search(r"\.(tar(\.\w+)?|tgz)$", w)][:1]
    if w0 in ("make", "go", "cargo") and len(words) > 1 and words[1] in ("install", "clean"):
        return []
    if w0 in ("python", "python3", "node", "ruby", "perl") and _INLINE_WRITE.search(part):
        return _WRITE_TARGET.findall(part)
    return None


def _script_path(words: list[str], scripts: dict[str, str]) -> str | None:
    cand = (
        words[1]
        if words[0] in ("bash", "sh", "python", "python3", "source", ".") and len(words) > 1
        else words[0]
    )
    if cand in scripts:
        return cand
    base = cand.rsplit("/", 1)[-1]
    hits = [p for p in scripts if p.rsplit("/", 1)[-1] == base]
    return hits[0] if len(hits) == 1 else None


def _script_kind(path: str, scripts: dict[str, str], depth: int) -> str:
    body = scripts[path]
    if path.endswith(".py"):
        return "modify" if _INLINE_WRITE.search(body) else "run"
    if depth > 3:
        return "run"
    kinds = [classify_segment(s, scripts, depth + 1) for s in split_segments(body)]
    return "modify" if "modify" in kinds else "run"


def setup_install(words: list[str]) -> bool:
    """Installing the project itself or its requirements (``pip install -e .``, ``pip install -r
    requirements.txt``, ``python setup.py develop``): environment set-up, not the deliverable.
    Installing a named package stays a modification (some tasks ask for exactly that)."""
    w = words[2:] if words[:3] in (["python", "-m", "pip"], ["python3", "-m", "pip"]) else words
    if w[:1] in (["pip"], ["pip3"]) and w[1:2] == ["install"]:
        args = [a for a in w[2:] if a not in ("-q", "--quiet", "--user", "-U", "--upgrade")]
        return bool(args) and all(a in ("-e", "--editable", "-r") or a.startswith((".", "/"))
                                  or a.endswith((".txt", ".toml")) for a in args)  # fmt: skip
    return len(words) >= 3 and words[1] == "setup.py" and words[2] in ("develop", "install")


def classify_part(part: str, scripts: dict[str, str] | None = None, depth: int = 0) -> str:
    """One pipeline component → modify/run/inspect/other. Writes only under /tmp, or only to
    probe files (``reproduce.py``, ``test_x.py``, ...), are set aside (``other``); running a
    script whose recorded body modifies state is ``modify``."""
    words = split_words(part)
    if not words:
        return "other"
    scripts = scripts or {}
    if setup_install(words):
        return "other"
    mod = _modification(words, part)
    if mod is not None:
        aside = mod and all(t.startswith(SCRATCH) or PROBE.search(t) for t in mod)
        return "other" if aside else "modify"
    w0 = words[0] if words[0].startswith("./") else words[0].rsplit("/", 1)[-1]
    script = _script_path(words, scripts)
    if script is not None:
        return _script_kind(script, scripts, depth)
    if w0 in RUN or w0.startswith("./") or w0.endswith((".py", ".sh")):
        return "run"
    if w0 in INSPECT:
        return "inspect"
    return "other"


def _pipe_parts(segment: str) -> list[str]:
    head, _, body = segment.partition("\n")
    masked = _strip_quotes(head)
    if "|" not in masked.replace("||", ""):
        return [segment]
    parts = [p for p in re.split(r"(?<!\|)\|(?!\|)", head)]
    parts[-1] = parts[-1] + ("\n" + body if body else "")
    return parts


def classify_segment(segment: str, scripts: dict[str, str] | None = None, depth: int = 0) -> str:
    """The strongest class among a segment's pipeline components."""
    kinds = [classify_part(p, scripts, depth) for p in _pipe_parts(segment)]
    return max(kinds, key=RANK.__getitem__)


def written_paths(segment: str, scripts: dict[str, str] | None = None) -> list[str]:
    """Files a segment visibly writes, including those written by a recorded script it runs."""
    words = split_words(segment)
    if not words:
        return []
    out = list(_modification(words, segment) or [])
    if words[0] in ("gcc", "cc", "clang", "g++") and "-o" in words[:-1]:
        out.append(words[words.index("-o") + 1])
    script = _script_path(words, scripts or {})
    if script is not None:
        body = (scripts or {})[script]
        out += _WRITE_TARGET.findall(body)
        for seg in split_segments(body) if not script.endswith(".py") else []:
            w = split_words(seg)
            out += list(_modification(w, seg) or []) if w else []
    return [p for p in out if p and not p.startswith("-")]


def heredoc_files(segment: str) -> dict[str, str]:
    """Files written from a heredoc (``cat > path <<'EOF' ... EOF``): path → body."""
    head, _, body = segment.partition("\n")
    words = split_words(segment)
    if not body or not words or words[0] not in ("cat", "tee"):
        return {}
    targets = _targets(segment) or (_args(words)[:1] if words[0] == "tee" else [])
    lines = body.split("\n")
    if lines and _HEREDOC.search(head):
        lines = lines[:-1]  # the terminator
    return {t: "\n".join(lines) for t in targets[:1]}


def is_control(text: str) -> bool:
    return bool(CONTROL.search(text or ""))
