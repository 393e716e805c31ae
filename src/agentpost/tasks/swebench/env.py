"""The conda-free environment of an instance: which Debian release (so which Python), and the
packages, with every departure from the harness's conda environment written down.

Python comes from Debian: bullseye 3.9, bookworm 3.11, trixie 3.13 (``PYTHON_BY_RELEASE``, the
releases ``sandbox.images`` has a debootstrap base recipe for). The spec's version is used where a
release has it; otherwise the nearest newer one (else the newest) stands in, and that is a
recorded deviation (``"python 3.10 -> 3.11 (bookworm)"``).

Packages: the spec's ``packages`` as the harness reads them, from the repository instead of the
network: ``requirements.txt`` is the harness's requirement file (``MAP_REPO_TO_REQS_PATHS``, ``-r``
includes followed, ``-e .`` and comments dropped, ``clean_requirements`` applied) read with ``git
show`` at ``environment_setup_commit``; ``environment.yml`` (``MAP_REPO_TO_ENV_YML_PATHS``) is read
the same way and its conda dependencies installed from PyPI; a plain list names conda packages,
installed from PyPI under the same names. ``pip_packages`` are the spec's pins, as given. Every
conda package installed from PyPI instead is a recorded deviation.

Layer: io.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from agentpost.errors import InputError
from agentpost.sandbox.images import SUITES
from agentpost.tasks.swebench import harness
from agentpost.tasks.swebench.instance import Instance

# Debian release -> its python3: the releases with a base recipe (``sandbox.images.SUITES``)
PYTHON_BY_RELEASE: dict[str, str] = dict(SUITES)
# conda names whose PyPI name differs
CONDA_TO_PYPI = {"pytables": "tables", "matplotlib-base": "matplotlib", "pytorch": "torch"}
_SKIP_CONDA = {"python", "pip", "setuptools", "wheel", "conda", "mamba"}


def releases() -> tuple[str, ...]:
    """Releases with a base image recipe here (``sandbox.images.SUITES``)."""
    return tuple(PYTHON_BY_RELEASE)


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:2])


def choose_release(python: str, available: tuple[str, ...]) -> tuple[str, str | None]:
    """(release, deviation or None) for the spec's Python version."""
    if not available:
        raise InputError(None, "python", "no Debian release has a base image here")
    by_py = sorted((_key(PYTHON_BY_RELEASE[r]), r) for r in available)
    want = _key(python)
    exact = [r for k, r in by_py if k == want]
    if exact:
        return exact[0], None
    newer = [r for k, r in by_py if k > want]
    rel = newer[0] if newer else by_py[-1][1]
    return rel, f"python {python} -> {PYTHON_BY_RELEASE[rel]} ({rel})"


def show(repo: Path, commit: str, path: str) -> str | None:
    out = subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"],
        capture_output=True, timeout=120,
    )  # fmt: skip
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def requirements(inst: Instance, repo: Path) -> str:
    """The harness's ``get_requirements`` for the instance, read from ``repo``."""
    m = harness.modules()
    paths = m["constants"].MAP_REPO_TO_REQS_PATHS.get(inst.repo, ["requirements.txt"])
    commit = inst.environment_setup_commit
    for req_path in paths:
        text = show(repo, commit, req_path)
        if text is not None:
            break
    else:
        raise InputError(repo, inst.instance_id, f"no requirements file at {paths} in {commit}")
    req_dir = "/".join(req_path.split("/")[:-1])

    def excluded(line: str) -> bool:
        return any(line.strip().startswith(x) for x in ["-e .", "#", ".[test"])

    original, extra = [], []
    for line in text.split("\n"):
        if line.strip().startswith("-r"):
            name = line[len("-r") :].strip()
            sub = show(repo, commit, f"{req_dir}/{name}" if req_dir else name)
            extra += [x for x in (sub or "").split("\n") if not excluded(x)]
        elif not excluded(line):
            original.append(line)
    extra.append("\n".join(original))
    return m["py_spec"].clean_requirements("\n".join(extra))


def _conda_to_pip(dep: str) -> str | None:
    name = re.split(r"[<>=!~ ]", dep.strip(), maxsplit=1)[0]
    if not name or name.lower() in _SKIP_CONDA or "::" in name:
        return None
    rest = dep.strip()[len(name) :].strip()
    if re.fullmatch(r"=[^=<>!].*", rest):  # conda's "=1.2" means "1.2.*"
        rest = "==" + rest[1:] + ("" if rest.endswith("*") else ".*")
    return CONDA_TO_PYPI.get(name, name) + rest


def environment_yml(inst: Instance, repo: Path) -> tuple[list[str], list[str]]:
    """(conda dependencies as PyPI requirements, pip requirements) of the harness's yml."""
    import yaml

    paths = harness.modules()["constants"].MAP_REPO_TO_ENV_YML_PATHS.get(
        inst.repo, ["environment.yml"]
    )
    for p in paths:
        text = show(repo, inst.environment_setup_commit, p)
        if text is not None:
            break
    else:
        raise InputError(repo, inst.instance_id, f"no environment.yml at {paths}")
    doc = yaml.safe_load(harness.modules()["py_spec"].clean_environment_yml(text)) or {}
    conda, pip = [], []
    for dep in doc.get("dependencies", []):
        if isinstance(dep, dict):
            pip += [str(x) for x in dep.get("pip", [])]
        elif (req := _conda_to_pip(str(dep))) is not None:
            conda.append(req)
    return conda, pip


def plan(inst: Instance, spec: dict[str, Any], repo: Path) -> dict[str, Any]:
    """What the environment holds: ``release``, ``requirements`` (text for ``pip install -r``),
    ``conda`` (conda packages installed from PyPI), ``pip`` (the spec's pins), ``deviations``."""
    release, dev = choose_release(str(spec.get("python", "3.9")), releases())
    deviations = [dev] if dev else []
    reqs, conda = "", []
    pkgs = spec.get("packages", "")
    if pkgs == "requirements.txt":
        reqs = requirements(inst, repo)
    elif pkgs == "environment.yml":
        conda, pip_extra = environment_yml(inst, repo)
        reqs = "\n".join(pip_extra)
    elif pkgs:
        conda = [r for r in (_conda_to_pip(p) for p in str(pkgs).split()) if r]
    if conda:
        deviations.append("conda packages from PyPI: " + " ".join(conda))
    return {
        "release": release,
        "python": PYTHON_BY_RELEASE[release],
        "requirements": reqs,
        "conda": conda,
        "pip": [str(p) for p in spec.get("pip_packages", [])],
        "deviations": deviations,
    }
