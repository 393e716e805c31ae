"""Rewrite a task's Dockerfile to build offline: every ``FROM`` onto a local base image, the
installs no reachable registry can serve dropped with a note, and its verifier's tools added.

No image registry is reachable here, so each ``FROM`` must name a base built on this machine
(``agentpost images build``). ``FROM_TABLE`` maps image references (``fnmatch`` patterns, first
match wins) to the local bases of ``sandbox.images`` (``KIND`` is bookworm's, ``KIND@SUITE``
another Debian release's), optionally followed by ``; INSTRUCTION`` lines that give back what the
original image set and the base lacks (its ``WORKDIR``, ``ENV``, ``USER``):

| FROM | base | why |
|---|---|---|
| ``python:3.12*``/``3.13*``/``3.14*``, ``python``, ``python:3`` | ``python@trixie`` | Debian 13's python3 is 3.13 |
| ``python:3.10*``, ``python:3.11*`` | ``python`` | bookworm's python3 is 3.11 |
| ``python:3.8*``, ``python:3.9*`` | ``python@bullseye`` | bullseye's python3 is 3.9 |
| ``debian:13*``/``trixie``, ``:12``/``bookworm``, ``:11``/``bullseye`` | that release's ``python`` | the same release (python added) |
| ``ubuntu:24.04``/``noble``, ``ubuntu`` | ``python@trixie`` | nearest toolchain (gcc 14, glibc 2.41, Python 3.13 for 13/2.39/3.12) and the same ``t64`` package names |
| ``ubuntu:22.04``/``jammy`` | ``python`` | bookworm (Python 3.11 for 3.10) |
| ``ubuntu:20.04``/``focal`` | ``python@bullseye`` | bullseye (Python 3.9 for 3.8) |
| ``buildpack-deps:*`` | ``build`` of the matching release | ``python`` + gcc/make, git, openssl, wget, tmux |
| ``ghcr.io/laude-institute/t-bench/*`` | ``build@trixie; WORKDIR /app`` | Terminal-Bench's bases (Python 3.13, tmux, build tools, ``WORKDIR /app``) |
| ``node:*`` | ``build@trixie`` + Debian's ``nodejs``, ``npm`` | Node 20 (Debian 13's) for any version asked |
| ``alpine:*``, ``nvidia/cuda:*`` | unsupported | musl/apk: no Alpine mirror; CUDA: no NVIDIA registry or GPU |

Departures, said plainly: an ``ubuntu:24.04`` task gets Debian trixie's userland, not Ubuntu's
(an Ubuntu-only package cannot be served, ``tasks check`` names it; an Ubuntu version pin in
a Dockerfile's ``apt-get install pkg=VERSION`` is dropped, the release's version served, said);
``python:3.13-slim-bookworm`` gets trixie, since bookworm has no Python 3.13 (Python lives in
``/usr/bin``, not ``/usr/local/bin``); ``add-apt-repository ppa:...`` is replaced by ``true``
(Launchpad is not reachable), so the packages the PPA would give come from Debian when it has
them and the build fails where it has not; a package the release dropped whose old transitional
package only pulled in others (``DROPPED``: trixie's ``libgl1-mesa-glx``) is installed as those. ``COPY --from=ghcr.io/astral-sh/uv:VERSION`` copies
``uv``/``uvx`` of that version, installed from PyPI in a stage of its own. A ``FROM`` that matches
nothing is refused with the reference named. The table is overridable
(``images.load_from_table``).

What the task will install at run time (the verifier's tools, the solution's and the setup
scripts' ``pip``/``uv``/``apt-get``/``npm`` installs) is read and provisioned by
``sandbox.provision``.

Layer: pure.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

UNSUPPORTED = "unsupported"
_TBENCH = "build@trixie; WORKDIR /app"
_NODE = (  # Node's images: Debian 13's nodejs (20) and npm, whatever version was asked
    "build@trixie; RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
    "--no-install-recommends nodejs npm && rm -rf /var/lib/apt/lists/*"
)

FROM_TABLE: dict[str, str] = {
    "python:3.8*": "python@bullseye",
    "python:3.9*": "python@bullseye",
    "python:3.10*": "python",
    "python:3.11*": "python",
    "python:3.12*": "python@trixie",
    "python:3.13*": "python@trixie",
    "python:3.14*": "python@trixie",
    "python:3": "python@trixie",
    "python:3-*": "python@trixie",
    "python:*": "python@trixie",
    "python": "python@trixie",
    "debian:11*": "python@bullseye",
    "debian:bullseye*": "python@bullseye",
    "debian:12*": "python",
    "debian:bookworm*": "python",
    "debian:*": "python@trixie",
    "debian": "python@trixie",
    "ubuntu:20.04*": "python@bullseye",
    "ubuntu:focal*": "python@bullseye",
    "ubuntu:22.04*": "python",
    "ubuntu:jammy*": "python",
    "ubuntu:*": "python@trixie",
    "ubuntu": "python@trixie",
    "buildpack-deps:bullseye*": "build@bullseye",
    "buildpack-deps:focal*": "build@bullseye",
    "buildpack-deps:bookworm*": "build",
    "buildpack-deps:jammy*": "build",
    "buildpack-deps:*": "build@trixie",
    "ghcr.io/laude-institute/t-bench/*": _TBENCH,
    "node:*": _NODE,
    "node": _NODE,
    "alpine:*": UNSUPPORTED + ": musl/apk, no Alpine mirror is reachable",
    "alpine": UNSUPPORTED + ": musl/apk, no Alpine mirror is reachable",
    "nvidia/cuda*": UNSUPPORTED + ": CUDA images need NVIDIA's registry (and a GPU)",
}

_FROM = re.compile(r"^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$", re.I)
_COPY_FROM = re.compile(r"^(\s*COPY\s+(?:--\S+\s+)*)--from=(\S+)(.*)$", re.I)
_UV_IMAGE = re.compile(r"^ghcr\.io/astral-sh/uv(?::(\d[\w.]*|latest))?$")
_PPA = re.compile(r"add-apt-repository\s+(?:-y\s+)?(ppa:\S+|'ppa:[^']+'|\"ppa:[^\"]+\")(?:\s+-y)?")
_BASE_NAME = re.compile(r"^(minimal|python|build)(@[a-z]+)?$")
# Debian packages a newer release dropped that Dockerfiles written for an older one still name:
# release -> {old name: what the old (transitional) package pulled in}
DROPPED: dict[str, dict[str, str]] = {
    "trixie": {"libgl1-mesa-glx": "libgl1 libglx-mesa0"},
}


_PIN = re.compile(r"^([a-z0-9][a-z0-9+.-]+)=(\d[\w.+:~-]*)$")  # apt's name=version
_SEP = re.compile(r"(\s+|&&|\|\||;|\|)")


def _unpin(line: str, state: dict, notes: list[str]) -> str:
    """``line`` of an Ubuntu stage with the version pins of ``apt(-get) install`` dropped (an
    Ubuntu version is never in Debian). ``state`` carries the instruction across continuation
    lines: ``run`` (inside a RUN), ``words`` (the current command's words so far)."""
    if not state.get("cont"):
        state["run"] = bool(re.match(r"\s*RUN\b", line, re.I))
        state["words"] = []
    state["cont"] = line.rstrip().endswith("\\")
    if not state["run"]:
        return line
    out = []
    for tok in _SEP.split(line):
        if tok in ("&&", "||", ";", "|"):
            state["words"] = []
        elif tok.strip():
            words = state["words"]
            pin = _PIN.match(tok)
            if pin and "install" in words and {"apt-get", "apt"} & set(words):
                notes.append(f"Ubuntu's {tok}: this release's version of {pin.group(1)} served")
                tok = pin.group(1)
            words.append(tok)
        out.append(tok)
    return "".join(out)


class DockerfileError(ValueError):
    """A Dockerfile this machine cannot build offline (the message says which line and why)."""


@dataclass
class Rewrite:
    text: str
    bases: list[str] = field(default_factory=list)  # base names the FROM lines now use
    notes: list[str] = field(default_factory=list)  # what was changed, for the build log


def map_from(image: str, table: dict[str, str]) -> str:
    """The table's target for ``FROM image``: a base name or literal local image, optionally
    followed by ``; INSTRUCTION`` lines. Raises ``DockerfileError`` for unsupported ones."""
    for pattern, target in table.items():
        if fnmatch.fnmatchcase(image, pattern):
            if target.startswith(UNSUPPORTED):
                why = target[len(UNSUPPORTED) :].lstrip(": ") or "no offline base"
                raise DockerfileError(f"FROM {image}: cannot be served offline ({why})")
            return target
    raise DockerfileError(
        f"FROM {image}: no offline base maps it; add a pattern to the FROM table "
        "(agentpost images build --from-table FILE)"
    )


def split_target(target: str) -> tuple[str, list[str]]:
    """``"build@trixie; WORKDIR /app"`` -> ``("build@trixie", ["WORKDIR /app"])``."""
    head, *extra = (part.strip() for part in target.split(";"))
    return head, [e for e in extra if e]


def stage_images(text: str) -> list[str]:
    """The images a Dockerfile's ``FROM`` lines name (earlier stages left out)."""
    stages: set[str] = set()
    out = []
    for line in text.splitlines():
        m = _FROM.match(line)
        if m:
            image, rest = m.group(3), m.group(4)
            if image.lower() not in stages:
                out.append(image)
            alias = re.search(r"\bAS\s+(\S+)", rest, re.I)
            if alias:
                stages.add(alias.group(1).lower())
    return out


def is_base(name: str) -> bool:
    """Whether a table target names a local base (``python``, ``build@trixie``), not an image."""
    return bool(_BASE_NAME.match(name))


def rewrite(text: str, table: dict[str, str], base_tags) -> Rewrite:
    """``text`` with each ``FROM`` mapped through ``table`` to the tag ``base_tags`` gives the base
    (a dict or a function; a target that is no base is taken as a local image tag), the target's
    extra instructions right after it, ``COPY --from`` an image served from PyPI where it can be,
    and PPAs dropped. Stage names stay as they are."""
    tag_of = base_tags.get if isinstance(base_tags, dict) else base_tags
    out = Rewrite(text="")
    stages: set[str] = set()
    lines: list[str] = []
    helpers: dict[str, str] = {}  # stage name -> its lines, put before the first FROM
    first_base = None
    dropped: dict[str, str] = {}
    ubuntu = False  # the stage is an Ubuntu image's: its apt version pins cannot be served
    ubuntu_stages: dict[str, bool] = {}
    apt: dict = {}
    for line in text.splitlines():
        m = _FROM.match(line)
        extra: list[str] = []
        if m:
            head, flags, image, rest = m.groups()
            alias = re.search(r"\bAS\s+(\S+)", rest, re.I)
            ubuntu = ubuntu_stages.get(image.lower(), image.lower().startswith("ubuntu"))
            if alias:
                ubuntu_stages[alias.group(1).lower()] = ubuntu
            if image.lower() not in stages:
                name, extra = split_target(map_from(image, table))
                release = name.partition("@")[2] if is_base(name) else ""
                dropped = DROPPED.get(release or "bookworm", {})
                out.bases.append(name)
                new = (tag_of(name) if is_base(name) else None) or name
                first_base = first_base or (name if is_base(name) else None)
                out.notes.append(f"FROM {image} -> {new}" + "".join(f"; {e}" for e in extra))
                image = new
            if alias:
                stages.add(alias.group(1).lower())
            line = f"{head}{image}{rest}"  # --platform flags dropped: one local platform
            if flags:
                out.notes.append(f"dropped FROM flags {flags.strip()}")
        c = _COPY_FROM.match(line)
        if c and c.group(2).lower() not in stages and not c.group(2).isdigit():
            line = _copy_from_image(c, helpers, out)
        for old, new in dropped.items():
            pattern = rf"(?<![\w.+-]){re.escape(old)}(?![\w.+-])"
            if re.search(pattern, line):
                line = re.sub(pattern, new, line)
                out.notes.append(f"{old} is gone from this release: installs {new} instead")
        if ubuntu:
            line = _unpin(line, apt, out.notes)
        for ppa in _PPA.findall(line):
            out.notes.append(
                f"{ppa} cannot be served (no Launchpad); its packages come from Debian"
            )
        line = _PPA.sub("true", line)
        lines.append(line)
        lines.extend(extra)
    if helpers:
        base = (tag_of(first_base) if first_base else None) or tag_of("python") or "python"
        top = next(i for i, x in enumerate(lines) if _FROM.match(x))
        block = [f"FROM {base} AS {name}\n{body}" for name, body in helpers.items()]
        lines[top:top] = block
    out.text = "\n".join(lines) + "\n"
    return out


def _copy_from_image(c: re.Match, helpers: dict[str, str], out: Rewrite) -> str:
    """``COPY --from=ghcr.io/astral-sh/uv:V /uv /uvx DEST``: from a stage that installs uv V
    from PyPI; any other image raises (no registry)."""
    image = c.group(2)
    uv = _UV_IMAGE.match(image)
    if not uv:
        raise DockerfileError(f"COPY --from={image}: needs that image from a registry")
    version = uv.group(1) if uv.group(1) not in (None, "latest") else None
    name = "agentpost-uv-" + (version or "latest").replace(".", "-")
    spec = f"uv=={version}" if version else "uv"
    helpers[name] = (
        f"RUN python3 -m pip install --no-cache-dir --target /opt/agentpost-uv '{spec}' "
        "&& cp /opt/agentpost-uv/bin/uv /opt/agentpost-uv/bin/uvx /"
    )
    out.notes.append(f"COPY --from={image}: uv {version or '(newest)'} from PyPI")
    return f"{c.group(1)}--from={name}{c.group(3)}"
