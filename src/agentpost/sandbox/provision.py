"""What a task installs at run time, read from its scripts, so its image can serve it offline.

Harbor and Terminal-Bench tasks are online by default: ``solve.sh`` runs ``pip install grpcio``
or ``apt-get install nginx``, ``test.sh`` runs ``uvx -p 3.13 -w pytest==8.4.1 pytest ...`` and a
test may write a script that ``apt-get install``s ``expect``. A sandbox here has no network, so
``read_needs`` reads those commands from the task's text files (shell or Python alike: the
commands are found by pattern, a line continuation joined, quotes and list commas stripped) and
``provision_lines`` appends to the task's Dockerfile a last step that runs
``provision_image.py`` inside the image at build time (when the build may use the network) to

- download every ``.deb`` an ``apt-get install`` / ``apt install`` would fetch (with or without
  recommends, as the command says; ``apt-get source`` packages too) into a local repository
  ``file:/opt/agentpost/apt`` that replaces the image's apt sources, so ``apt-get update &&
  apt-get install`` work as online (an unreachable source the agent adds is only a warning);
- download wheels for ``pip install`` / ``uv pip install`` / ``uv run --with`` requirements for
  the interpreter that will install them (``python3.X -m pip``, ``--python 3.X``), building
  sdists into wheels where it can, into ``/opt/agentpost/wheels``, which pip and uv use as their
  index (``PIP_INDEX_URL``: a local index of them; ``PIP_FIND_LINKS``, ``UV_OFFLINE``,
  ``UV_FIND_LINKS``; pip still uses an index a command names that the sandbox itself serves,
  e.g. a PyPI server the task runs on localhost, where ``PIP_NO_INDEX`` would have hidden it);
- replay each ``uvx`` (``uv tool run``) with its ``-p``/``--with``/``--from`` and the tool's
  ``--version``, and ``uv init`` + ``uv add``, into uv's cache
  (``UV_CACHE_DIR=/opt/agentpost/uv-cache``): uv then resolves, and reuses the tool environment,
  offline (``-p 3.13`` finds the image's python3.13; uv never downloads one);
- check that the image has each interpreter a ``uv venv -p 3.12`` / ``uv run --python 3.12`` /
  ``uv pip install --python 3.12`` asks (uv may not download one offline), and name the one it
  lacks (TB2's mailman asks Ubuntu 24.04's 3.12; the Debian 13 base has 3.13 only);
- fill npm's cache for ``npm install`` (``npm_config_offline``);
- install the uv version a test's ``astral.sh/uv/VERSION/install.sh`` line asks for.

What cannot be served is written to ``/opt/agentpost/provision/report.json`` with apt's or pip's
own reason (an Ubuntu version pin, a package Debian lacks, a ``git+https`` requirement), and
``tasks check`` names it. Departure: packages come from PyPI and Debian, never from another index
a command names (``--index-url https://download.pytorch.org/...`` gets PyPI's wheel).

Layer: pure.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

ROOT = "/opt/agentpost"
WHEELS = f"{ROOT}/wheels"
UV_CACHE = f"{ROOT}/uv-cache"
NPM_CACHE = f"{ROOT}/npm-cache"
APT_REPO = f"{ROOT}/apt"
HELPER_DIR = f"{ROOT}/provision"
REPORT = f"{HELPER_DIR}/report.json"
CONTEXT_DIR = ".agentpost-provision"  # in the build context: the helper and needs.json

RUNTIME_ENV = {
    "PIP_INDEX_URL": f"file://{ROOT}/pip-index",  # the wheels' own index, not no-index:
    "PIP_RETRIES": "0",  # a command's --index-url on localhost still works; others fail fast
    "PIP_FIND_LINKS": WHEELS,
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "UV_OFFLINE": "1",
    "UV_FIND_LINKS": WHEELS,
    "UV_CACHE_DIR": UV_CACHE,
    "UV_PYTHON_DOWNLOADS": "never",
    "npm_config_cache": NPM_CACHE,
    "npm_config_offline": "true",
}

_PIP = re.compile(
    r"(?:^|[\s;&|(`\"'\[,])(?:\S*/)?(?:pip(?:3(\.\d+)?)?|python(?:3(\.\d+)?)?\s+-m\s+pip"
    r"|uv\s+pip)\s+install\b(.*)"
)
_UVX = re.compile(r"(?:^|[\s;&|(`\"'\[,])(?:uvx|uv\s+tool\s+run)\b(.*)")
_UV_ADD = re.compile(r"(?:^|[\s;&|(`\"'\[,])uv\s+add\b(.*)")
_UV_RUN = re.compile(r"(?:^|[\s;&|(`\"'\[,])uv\s+run\b(.*)")
_UV_VENV = re.compile(r"(?:^|[\s;&|(`\"'\[,])uv\s+venv\b(.*)")
_APT = re.compile(r"(?:^|[\s;&|(`\"'\[,])apt(?:-get)?((?:\s+-[-\w=.:]+)*)\s+install\b(.*)")
_APT_SOURCE = re.compile(r"(?:^|[\s;&|(`\"'\[,])apt-get((?:\s+-[-\w=.:]+)*)\s+source\b(.*)")
_NPM = re.compile(r"(?:^|[\s;&|(`\"'\[,])npm\s+(?:install|i|add)\b(.*)")
_UV_INSTALLER = re.compile(r"astral\.sh/uv/(\d+\.\d+\.\d+)/install\.sh")
# a download from a host no registry here stands in for (what the task will miss offline)
_FETCH = re.compile(
    r"(?:^|[\s;&|(`\"'\[,])(?:wget|curl|git\s+clone|git\s+fetch|aria2c)\b[^\n;&|]*?"
    r"(?:https?|ftp|git)://([A-Za-z0-9.-]+)[^\s\"']*|git@([A-Za-z0-9.-]+):"
)
# model and data hubs that Python libraries download from by name (no URL in the script)
_HUB = re.compile(
    r"\b(from_pretrained|load_dataset|hf_hub_download|snapshot_download|torch\.hub\.load"
    r"|mteb\.get_model)\("
)
# R's package repositories (install.packages, remotes::install_version ...: CRAN and mirrors)
_R_REPOS = re.compile(r"\brepos\s*=\s*(?:c\(\s*)?[\"'](?:https?|ftp)://([A-Za-z0-9.-]+)")
_PY_URL = re.compile(
    r"\b(?:requests\.get|requests\.post|urlopen|urlretrieve|httpx\.get|wget\.download)\(\s*"
    r"[\"'](?:https?|ftp)://([A-Za-z0-9.-]+)"
)
# a file that uses an HTTP client: each URL literal in it (a variable, an f-string, the line after
# the call) may be fetched at run time
_HTTP_CLIENT = re.compile(
    r"^\s*(?:import|from)\s+(?:requests|httpx|aiohttp|urllib3|urllib\.request)\b|\burlopen\(",
    re.M,
)
_URL_LITERAL = re.compile(r"(?<![\w\\])[fFrRbBuU]{0,2}[\"'](?:https?|ftp)://([A-Za-z0-9.-]+)")
SERVED_HOSTS = {
    "localhost", "127.0.0.1", "0.0.0.0", "astral.sh", "pypi.org", "files.pythonhosted.org",
    "deb.debian.org", "security.debian.org", "registry.npmjs.org",
}  # fmt: skip

_REQ = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[\w,.-]*\])?(\s*[<>=!~]=?\s*[\w.*+!-]+(,\s*[<>=!~]=?\s*[\w.*+!-]+)*)?$"
)
_DEB = re.compile(r"^[a-z0-9][a-z0-9.+-]+(=[A-Za-z0-9.+~:-]+|/[\w-]+)?$")
_NPM_SPEC = re.compile(r"^(@[\w.-]+/)?[\w.-]+(@[\w.^~<>=*-]+)?$")
_PY_VERSION = re.compile(r"^(?:cpython-?|python)?(3\.\d+)(?:\.\d+)?$")

PIP_VALUE_OPTS = {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
    "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root",
    "--python", "-p", "--platform", "--python-version", "--implementation", "--abi",
    "--only-binary", "--no-binary", "--src", "--upgrade-strategy", "--progress-bar",
    "--cache-dir", "--log", "--proxy", "--retries", "--timeout", "--exists-action", "--cert",
    "--client-cert", "-C", "--config-settings", "--global-option", "--install-option",
    "--report", "--trusted-host", "--index-strategy", "--index", "--default-index",
    "--group", "--extra", "--with", "-w", "--from", "--with-requirements", "--with-editable",
    "--directory", "--project", "--package", "--script", "--env-file",
}  # fmt: skip
APT_VALUE_OPTS = {"-o", "--option", "-t", "--target-release", "-c", "--config-file"}
NPM_VALUE_OPTS = {"--prefix", "--registry", "--cache", "-w", "--workspace", "--tag"}


@dataclass
class Needs:
    """Everything a task's scripts install. ``pip`` maps a Python minor version (``""``: the
    image's python3) to requirement specifiers; ``apt`` is a list of (packages, with recommends)
    per command; ``notes`` are installs seen that no registry here can serve."""

    pip: dict[str, list[str]] = field(default_factory=dict)
    uvx: list[dict] = field(default_factory=list)  # {python, with, from, tool}
    pythons: list[dict] = field(default_factory=list)  # {python, how, where}: uv venv/run -p
    uv_projects: list[list[str]] = field(default_factory=list)
    apt: list[tuple[list[str], bool]] = field(default_factory=list)
    apt_source: list[str] = field(default_factory=list)
    npm: list[tuple[bool, list[str]]] = field(default_factory=list)
    uv_version: str | None = None
    notes: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return not (
            self.pip
            or self.uvx
            or self.pythons
            or self.uv_projects
            or self.apt
            or self.apt_source
            or self.npm
        ) and (self.uv_version is None)

    def to_json(self) -> dict:
        return {
            "pip": {k: _dedupe(v) for k, v in sorted(self.pip.items())},
            "uvx": [dict(u) for u in {json.dumps(u, sort_keys=True): u for u in self.uvx}.values()],
            "pythons": [
                dict(u) for u in {json.dumps(u, sort_keys=True): u for u in self.pythons}.values()
            ],
            "uv_projects": self.uv_projects,
            "apt": [[sorted(set(p)), r] for p, r in self.apt],
            "apt_source": sorted(set(self.apt_source)),
            "npm": [[g, s] for g, s in self.npm],
            "uv_version": self.uv_version,
            "notes": sorted(set(self.notes)),
        }


def _dedupe(reqs: list[str]) -> list[str]:
    """Sorted, unique, and a bare name dropped where a pinned one of it is asked for too."""
    pinned = {re.split(r"[=<>!~\[]", r)[0].lower() for r in reqs if re.search(r"[=<>!~]", r)}
    return sorted({r for r in reqs if re.search(r"[=<>!~]", r) or r.lower() not in pinned})


def logical_lines(text: str) -> list[str]:
    """Lines with backslash continuations joined (``\\\\`` + newline inside a Python string
    too) and comments after ``#`` at a line start dropped."""
    text = re.sub(r"\\\\?\n", " ", text)
    text = re.sub(r"[\"']\s*,\s*[\"']", " ", text)  # ["pip", "install", "x"]: one string
    return [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]


def segment(rest: str) -> list[str]:
    """The words of one shell command: ``rest`` up to the first unquoted ``;``, ``&&``, ``|``,
    ``)``, backquote, redirection, or quote that closes a string the command began in; quotes,
    list brackets and commas stripped (``["pip", "install", "x"]`` reads as ``pip install x``)."""
    words, cur, quote = [], "", None
    i = 0
    while i < len(rest):
        ch = rest[i]
        if quote:
            if ch == quote:
                quote = None
            else:
                cur += ch
        elif ch in "'\"":
            if rest[i + 1 : i + 2] in ("", " ", "\t", ",", "]", ")", ";"):
                break  # the closing quote of a string the command sits in: it ends here
            quote = ch
        elif ch in "<>" and cur and rest[i + 1 : i + 2] == "=":
            cur += ch  # a version operator (numpy>=2) in a Python list, not a redirection
        elif ch in ";|&)`<>#\n" or (ch == "$" and rest[i + 1 : i + 2] == "("):
            break
        elif ch in " \t,[]":
            if cur:
                words.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    if cur:
        words.append(cur)
    return words


def _positionals(words: list[str], value_opts: set[str]) -> tuple[list[str], dict[str, list]]:
    """(positional words, {option: [values]}) of a command's arguments."""
    pos: list[str] = []
    opts: dict[str, list] = {}
    skip = None
    for w in words:
        if skip is not None:
            opts.setdefault(skip, []).append(w)
            skip = None
        elif w.startswith("-") and len(w) > 1:
            name, eq, value = w.partition("=")
            if eq:
                opts.setdefault(name, []).append(value)
            elif name in value_opts:
                skip = name
            elif re.fullmatch(r"-[a-zA-Z]{2,}", name) and name[-1] in "prcewitf":
                skip = "-" + name[-1]  # bundled short flags, the last taking a value (-qr f)
            else:
                opts.setdefault(name, []).append(True)
        else:
            pos.append(w)
    return pos, opts


def _requirements(words: list[str], notes: list[str], where: str) -> list[str]:
    out = []
    for w in words:
        if "$" in w or w in (".", "..") or w.startswith(("./", "/", "~")):
            continue  # a variable or a local path (built from the build deps served below)
        if "://" in w or w.startswith("git+") or " @ " in w:
            notes.append(f"{where}: {w} is fetched from a URL, not from PyPI")
        elif w.endswith((".whl", ".tar.gz", ".zip")):
            continue
        elif _REQ.match(w) and re.match(r"[A-Za-z]", w):
            out.append(w)
    return out


def _python_of(value) -> str:
    """The minor version ``-p``/``--python`` asks for (``"3.13"``), or ``""`` (python3)."""
    if not isinstance(value, str):
        return ""
    m = _PY_VERSION.match(value.strip())
    return m.group(1) if m else ""


def _python_asked(words: list[str], options_only: bool) -> tuple[str, str]:
    """(minor version, the option as written: ``-p 3.12`` / ``--python=3.12``) of a uv
    command's words, or ``("", "")``. ``options_only``: stop at the first positional word (what
    ``uv run`` runs: ``pytest -p no:cacheprovider`` is pytest's own ``-p``)."""
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ""
        if w in ("-p", "--python") and i + 1 < len(words):
            return _python_of(words[i + 1]), f"{w} {words[i + 1]}"
        if w.startswith("--python="):
            return _python_of(w.partition("=")[2]), w
        if options_only and not w.startswith("-") and prev not in PIP_VALUE_OPTS:
            break
    return "", ""


def _ask_python(needs: Needs, command: str, words: list[str], label: str, options_only: bool):
    py, flag = _python_asked(words, options_only)
    if py:
        needs.pythons.append({"python": py, "how": f"{command} {flag}", "where": label})
    return py


def read_needs(texts: dict[str, str]) -> Needs:
    """``texts``: {label (a file name, for notes): content}. The installs they contain."""
    needs = Needs()
    for label, text in texts.items():
        for line in logical_lines(text):
            _read_line(line, label, needs)
        if _HTTP_CLIENT.search(text):
            for m in _URL_LITERAL.finditer(text):
                _note_host(m.group(1), label, needs)
    return needs


def _note_host(host: str, label: str, needs: Needs) -> None:
    host = host.lower()
    if host not in SERVED_HOSTS and not re.fullmatch(r"[\d.]+|[\w-]+", host):
        needs.notes.append(f"{label}: fetches from {host} (no registry here serves it)")


def _read_line(line: str, label: str, needs: Needs) -> None:
    notes = needs.notes
    m = _UV_INSTALLER.search(line)
    if m:
        needs.uv_version = m.group(1)
    for m in _HUB.finditer(line):
        hub = "download.pytorch.org" if m.group(1).startswith("torch") else "huggingface.co"
        notes.append(f"{label}: fetches from {hub} ({m.group(1)}; no registry here serves it)")
    for m in [*_FETCH.finditer(line), *_PY_URL.finditer(line), *_R_REPOS.finditer(line)]:
        host = m.group(1) or (m.group(2) if m.re is _FETCH else "") or ""
        if host:
            _note_host(host, label, needs)
    for m in _PIP.finditer(line):
        pos, opts = _positionals(segment(m.group(3)), PIP_VALUE_OPTS)
        minor = m.group(1) or m.group(2)
        py = _python_of((opts.get("--python") or opts.get("-p") or [""])[-1])
        if py:  # ``uv pip install --python 3.12``: that interpreter must be in the image
            command = " ".join(line[m.start() : m.start(3)].strip(" \t;&|(`\"'[,").split())
            _ask_python(needs, command.rsplit("/", 1)[-1], segment(m.group(3)), label, False)
        py = py or (f"3{minor}" if minor else "")
        reqs = _requirements(pos, notes, label)
        for url in (
            opts.get("-i", []) + opts.get("--index-url", []) + opts.get("--extra-index-url", [])
        ):
            if isinstance(url, str) and "pypi.org" not in url:
                notes.append(f"{label}: {' '.join(reqs)} from PyPI, not from {url}")
        if reqs:
            needs.pip.setdefault(py, []).extend(reqs)
    for m in _UVX.finditer(line):
        words = segment(m.group(1))
        tool, rest = None, []
        for i, w in enumerate(words):  # options up to the tool's name, the rest is its argv
            prev = words[i - 1] if i else ""
            if not w.startswith("-") and not (prev in PIP_VALUE_OPTS and "=" not in prev):
                tool, rest = w, words[:i]
                break
        if tool is None:
            continue
        _, opts = _positionals(rest, PIP_VALUE_OPTS)
        py = _python_of((opts.get("--python") or opts.get("-p") or [""])[-1])
        withs = [v for k in ("--with", "-w") for v in opts.get(k, []) if isinstance(v, str)]
        withs = _requirements([p for v in withs for p in v.split(",")], notes, label)
        frm = [v for v in opts.get("--from", []) if isinstance(v, str)]
        tool_req = frm[-1] if frm else re.sub(r"@latest$", "", tool).replace("@", "==")
        reqs = _requirements([tool_req], notes, label)
        if reqs:
            name = re.split(r"[=<>!~\[]", tool)[0]
            needs.uvx.append({"python": py, "with": withs, "from": reqs[0], "tool": name})
    for m in _UV_ADD.finditer(line):
        pos, _ = _positionals(segment(m.group(1)), PIP_VALUE_OPTS)
        reqs = _requirements(pos, notes, label)
        if reqs:
            needs.uv_projects.append(reqs)
    for m in _UV_RUN.finditer(line):
        words = segment(m.group(1))
        py = _ask_python(needs, "uv run", words, label, True)
        _, opts = _positionals(words, PIP_VALUE_OPTS)
        withs = [v for k in ("--with", "-w") for v in opts.get(k, []) if isinstance(v, str)]
        reqs = _requirements([p for v in withs for p in v.split(",")], notes, label)
        if reqs:
            needs.pip.setdefault(py, []).extend(reqs)
    for m in _UV_VENV.finditer(line):
        _ask_python(needs, "uv venv", segment(m.group(1)), label, False)
    for m in _APT.finditer(line):
        pos, opts = _positionals(segment(m.group(2)), APT_VALUE_OPTS)
        _, opts0 = _positionals(m.group(1).split(), APT_VALUE_OPTS)
        no_rec = "--no-install-recommends" in opts or "--no-install-recommends" in opts0
        pkgs = [p for p in pos if _DEB.match(p) and re.search(r"[a-z]", p.split("=")[0])]
        if pkgs:
            needs.apt.append((pkgs, not no_rec))
    for m in _APT_SOURCE.finditer(line):
        pos, _ = _positionals(segment(m.group(2)), APT_VALUE_OPTS)
        needs.apt_source.extend(p for p in pos if _DEB.match(p))
    for m in _NPM.finditer(line):
        pos, opts = _positionals(segment(m.group(1)), NPM_VALUE_OPTS)
        specs = [p for p in pos if _NPM_SPEC.match(p)]
        if specs:
            needs.npm.append(("-g" in opts or "--global" in opts, specs))


def provision_lines(needs: Needs, user: str | None = None) -> str:
    """The Dockerfile lines that serve ``needs`` offline: copy the helper and ``needs.json``
    from the build context (``CONTEXT_DIR``), run it as root, set the run-time environment, and
    give the image back its last ``USER``."""
    env = " ".join(f"{k}={v}" for k, v in RUNTIME_ENV.items())
    lines = [
        "",
        "# --- agentpost: what the task installs at run time, served offline ---",
        "USER root",
        f"COPY {CONTEXT_DIR} {HELPER_DIR}",
        f"RUN python3 {HELPER_DIR}/provision_image.py {HELPER_DIR}/needs.json",
        f"ENV {env}",
    ]
    if user:
        lines.append(f"USER {user}")
    return "\n".join(lines) + "\n"


def needs_json(needs: Needs) -> bytes:
    return json.dumps(needs.to_json(), indent=1, sort_keys=True).encode()


_USER = re.compile(r"^\s*USER\s+(\S+)", re.I | re.M)


def last_user(dockerfile: str) -> str | None:
    """The last ``USER`` of a Dockerfile's final stage (None: root)."""
    final = re.split(r"^\s*FROM\s", dockerfile, flags=re.I | re.M)[-1]
    users = _USER.findall(final)
    return users[-1] if users else None
