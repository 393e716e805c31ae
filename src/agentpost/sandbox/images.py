"""Local base images for the docker backend, built with no image registry, one set per Debian
release.

Per release in ``SUITES`` (bookworm: Python 3.11, trixie: 3.13, bullseye: 3.9; adding a release
is one line): ``minimal`` is that release from ``debootstrap --variant=minbase`` against the
Debian mirror apt already uses (its ``-updates`` and security suites in the image's sources, as
in Debian's own images), imported with ``docker import``; ``python`` adds python3, pip, venv,
CPython's headers (``python3-dev``: a task's tests may build a C extension; the ``python:*``
images ship them), pytest, uv, curl and CA certificates, and pip, setuptools and wheel in
``/usr/local`` that pip can upgrade (Debian's own have no ``RECORD``), and drops Debian's
``EXTERNALLY-MANAGED`` marker, as the ``python:*`` images have none; ``build`` adds compilers,
git, openssl, wget and tmux. A base is named ``KIND`` for bookworm and ``KIND@SUITE`` otherwise
(``python@trixie``); ``ensure_base(backend, "python", suite="trixie")`` says the same. The task
Dockerfiles' ``FROM`` lines are mapped onto these by ``sandbox.dockerfile.FROM_TABLE``
(overridable: ``load_from_table``).

Caching: each base is tagged ``agentpost-base-<kind>[-<suite>]:<hash>``, the hash covering its
recipe and its parent's tag (``minimal``: the suite, variant, mirror and sources), so an
unchanged recipe is never rebuilt and a changed one never reuses a stale image; ``:latest``
points at the newest build. Build steps use the host network for the Debian mirror and PyPI
(``docker build --network host``); nothing that runs in a sandbox ever does.

Layer: io.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path

from agentpost.errors import InfraError, InputError
from agentpost.sandbox.dockerfile import FROM_TABLE, UNSUPPORTED

# Debian release -> the python3 it ships. One line per release; the first is the default.
SUITES: dict[str, str] = {
    "bookworm": "3.11",
    "trixie": "3.13",
    "bullseye": "3.9",
}
DEFAULT_SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
BUILD_TIMEOUT_S = 1800.0
# The CA bundle build steps trust: the host's (a proxy in front of PyPI may sign with its own CA).
# Only image *builds* reach the network, so trusting it inside the image changes nothing at run.
CA_PATH = "/etc/ssl/certs/agentpost-build-ca.crt"
HOST_CA = "/etc/ssl/certs/ca-certificates.crt"

_APT = (
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
    "--no-install-recommends {} && rm -rf /var/lib/apt/lists/*"
)
KINDS = ("minimal", "python", "build")
RECIPES: dict[str, tuple[str, str]] = {  # kind -> (parent kind, Dockerfile body after FROM)
    "python": (
        "minimal",
        "ENV LANG=C.UTF-8 PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1\n"
        f"COPY host-ca.crt {CA_PATH}\n"
        f"ENV PIP_CERT={CA_PATH} SSL_CERT_FILE={CA_PATH} REQUESTS_CA_BUNDLE={CA_PATH}\n"
        + _APT.format(
            "python3 python3-pip python3-venv python3-dev python-is-python3 ca-certificates"
            " curl procps"
        )
        + "\nRUN rm -f /usr/lib/python3*/EXTERNALLY-MANAGED"
        # pip, setuptools and wheel of their own in /usr/local, as the python:* images have: a
        # dpkg-installed one has no RECORD, so `pip install --upgrade pip` could not replace it
        + " && python3 -m pip install --no-cache-dir --ignore-installed pip setuptools wheel"
        + " && python3 -m pip install --no-cache-dir pytest uv\n",
    ),
    "build": (
        "python",
        _APT.format("build-essential git openssl wget unzip xz-utils patch file tmux less") + "\n",
    ),
}
# what `agentpost images build` makes when no --base is given: bookworm's three and trixie's
# python and build (Terminal-Bench 2's python:3.13 and ubuntu:24.04 tasks map there)
DEFAULT_BASES = ("minimal", "python", "build", "python@trixie", "build@trixie")
BASES = tuple(k if s == DEFAULT_SUITE else f"{k}@{s}" for s in SUITES for k in KINDS)


def parse_base(name: str, suite: str | None = None) -> tuple[str, str]:
    """(kind, suite) of a base name: ``python`` is bookworm's, ``python@trixie`` trixie's;
    ``suite`` (when given) overrides the one in the name. Raises InputError for unknown ones."""
    kind, _, in_name = name.partition("@")
    suite = suite or in_name or DEFAULT_SUITE
    if kind not in KINDS:
        raise InputError(name, None, f"no base image named {name!r}; choose from {list(BASES)}")
    if suite not in SUITES:
        raise InputError(name, None, f"no Debian release {suite!r}; choose from {list(SUITES)}")
    return kind, suite


def base_name(kind: str, suite: str) -> str:
    return kind if suite == DEFAULT_SUITE else f"{kind}@{suite}"


def python_version(name: str) -> str:
    """The python3 minor version base ``name`` has (``"3.13"`` for ``python@trixie``)."""
    return SUITES[parse_base(name)[1]]


def _host_uris() -> list[str]:
    """The URIs of the host's apt sources (deb822 ``URIs:`` and ``deb`` lines), in order."""
    uris = []
    paths = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for p in paths:
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in re.finditer(r"^(?:URIs:\s*(\S+)|deb\s+(?:\[[^]]*\]\s+)?(\S+))", text, re.M):
            uris.append((m.group(1) or m.group(2)).rstrip("/"))
    return uris


def debian_mirror() -> str:
    """The Debian mirror apt uses here (a source whose path ends in ``/debian``), else
    deb.debian.org."""
    return next((u for u in _host_uris() if u.endswith("/debian")), DEFAULT_MIRROR)


def security_mirror(mirror: str) -> str:
    """The host's ``/debian-security`` source, else the one beside ``mirror``."""
    beside = mirror[: -len("/debian")] + "/debian-security" if mirror.endswith("/debian") else ""
    found = next((u for u in _host_uris() if u.endswith("/debian-security")), None)
    return found or beside or DEFAULT_MIRROR + "-security"


def sources_list(suite: str, mirror: str) -> str:
    """The apt sources of a base: the release, its -updates and its security suite (main), as
    in Debian's own container images."""
    return (
        f"deb {mirror} {suite} main\n"
        f"deb {mirror} {suite}-updates main\n"
        f"deb {security_mirror(mirror)} {suite}-security main\n"
    )


def _hash(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def base_tag(name: str, mirror: str | None = None, suite: str | None = None) -> str:
    """The content-hashed tag base ``name`` has (whether or not it is built yet)."""
    kind, suite = parse_base(name, suite)
    repo = f"agentpost-base-{kind}" + ("" if suite == DEFAULT_SUITE else f"-{suite}")
    if kind == "minimal":
        mirror = mirror or debian_mirror()
        return (
            f"{repo}:{_hash('debootstrap', 'minbase', suite, mirror, sources_list(suite, mirror))}"
        )
    parent, body = RECIPES[kind]
    files = "".join(f"{k}:{hashlib.sha256(v).hexdigest()}" for k, v in _files(kind).items())
    return f"{repo}:{_hash(base_tag(parent, mirror, suite), body, files)}"


def _files(kind: str) -> dict[str, bytes]:
    """Files a base's build context holds: the CA bundle for ``python``."""
    if kind != "python":
        return {}
    path = os.environ.get("AGENTPOST_BUILD_CA", HOST_CA)
    try:
        return {"host-ca.crt": Path(path).read_bytes()}
    except OSError:
        return {"host-ca.crt": b""}


def image_exists(backend, tag: str) -> bool:
    out = backend.cli("image", "inspect", "--format", "{{.Id}}", tag, timeout_s=30, check=False)
    return out.strip().startswith("sha256:")


def ensure_base(backend, name: str, log=print, suite: str | None = None) -> str:
    """The tag of base ``name`` (``python``, ``python@trixie``; or ``name`` with ``suite``),
    built (with its parents) unless it exists."""
    kind, suite = parse_base(name, suite)
    tag = base_tag(kind, suite=suite)
    if image_exists(backend, tag):
        return tag
    if kind == "minimal":
        _build_minimal(backend, tag, suite, log)
    else:
        parent = ensure_base(backend, RECIPES[kind][0], log, suite=suite)
        log(f"building {tag} on {parent}")
        dockerfile = f"FROM {parent}\n{RECIPES[kind][1]}"
        build(backend, tag, dockerfile, None, BUILD_TIMEOUT_S, files=_files(kind))
    backend.cli("tag", tag, f"{tag.split(':')[0]}:latest", timeout_s=30)
    return tag


def _build_minimal(backend, tag: str, suite: str, log) -> None:
    if shutil.which("debootstrap") is None:
        raise InfraError("debootstrap is missing (apt-get install debootstrap)")
    mirror = debian_mirror()
    log(f"building {tag}: debootstrap --variant=minbase {suite} from {mirror}")
    with tempfile.TemporaryDirectory(prefix="agentpost-debootstrap-") as tmp:
        root = os.path.join(tmp, "root")
        cmd = ["debootstrap", "--variant=minbase", suite, root, mirror]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            raise InfraError(f"debootstrap timed out after {e.timeout:.0f} s") from None
        if out.returncode != 0:
            raise InfraError(f"debootstrap {suite} failed: {(out.stdout + out.stderr)[-800:]}")
        shutil.rmtree(os.path.join(root, "var/cache/apt/archives"), ignore_errors=True)
        Path(root, "etc/apt/sources.list").write_text(sources_list(suite, mirror))
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        try:
            backend.cli("import", "-", tag, timeout_s=600, stdin=tar.stdout)
        finally:
            tar.stdout.close()
            tar.wait()


def build(
    backend,
    tag: str,
    dockerfile: str,
    context: str | None,
    timeout_s: float,
    files: dict[str, bytes] | None = None,
) -> None:
    """``docker build`` of ``dockerfile`` (text) in ``context`` (None: a new one holding
    ``files``), host network for its RUN steps, classic builder (no BuildKit or registry)."""
    with tempfile.TemporaryDirectory(prefix="agentpost-build-") as tmp:
        df = os.path.join(tmp, "Dockerfile")
        Path(df).write_text(dockerfile, encoding="utf-8")
        ctx = context or os.path.join(tmp, "context")
        os.makedirs(ctx, exist_ok=True)
        for name, data in (files or {}).items() if context is None else ():
            Path(ctx, name).write_bytes(data)
        argv = [
            backend.binary,
            "build",
            "--network",
            "host",
            "--force-rm",
            "-q",
            "-t",
            tag,
            "-f",
            df,
            ctx,
        ]
        try:
            out = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                env={**os.environ, "DOCKER_BUILDKIT": "0"},
            )
        except subprocess.TimeoutExpired:
            raise InfraError(f"docker build of {tag} took longer than {timeout_s:.0f} s") from None
    if out.returncode != 0:
        raise InfraError(f"docker build of {tag} failed: {(out.stdout + out.stderr)[-1500:]}")


def load_from_table(path: str | Path | None = None) -> dict[str, str]:
    """``FROM_TABLE`` with the overrides of a TOML file (``path``, else ``$AGENTPOST_FROM_TABLE``)
    put first: ``[from]`` pattern = base name, local image tag, or ``"unsupported: why"``."""
    path = path or os.environ.get("AGENTPOST_FROM_TABLE")
    if not path:
        return dict(FROM_TABLE)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise InputError(path, None, f"cannot read FROM table: {e}") from None
    table = data.get("from")
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise InputError(path, "[from]", "must be a table of pattern = base or image strings")
    return {**table, **{k: v for k, v in FROM_TABLE.items() if k not in table}}


def table_rows(rows: list[tuple[str, str]]) -> list[dict]:
    """Each (pattern, target) with what it means: the base, its Debian release and Python, the
    instructions added after the FROM (None base: an unsupported pattern or a local image)."""
    from agentpost.sandbox.dockerfile import is_base, split_target

    out = []
    for pattern, target in rows:
        name, extra = split_target(target)
        row = {"pattern": pattern, "target": target, "base": None, "release": None}
        row |= {"python": None, "extra": extra}
        if is_base(name):
            kind, suite = parse_base(name)
            row |= {"base": name, "release": suite, "python": SUITES[suite]}
        elif not target.startswith(UNSUPPORTED):
            row["base"] = name  # a local image tag the override names
        out.append(row)
    return out


def describe_table(table: dict[str, str]) -> list[tuple[str, str]]:
    """(pattern, target) rows in the order they are tried (the first match wins), for
    ``agentpost images table``."""
    return list(table.items())
