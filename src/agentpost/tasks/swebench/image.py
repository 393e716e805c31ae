"""An instance's image, offline at run time: a Debian base by Python version, a venv where the
harness's conda environment would be, the clean repository at ``/testbed``, the harness's install.

Layout (the paths the harness's scripts expect): the environment is a Debian ``venv`` at
``/opt/miniconda3/envs/testbed``; ``/opt/miniconda3/bin/activate`` is a small stand-in that
defines ``conda activate NAME`` (activate that venv), so the harness's ``source
/opt/miniconda3/bin/activate; conda activate testbed`` lines run unchanged. The venv is on
``PATH`` in the image, in login shells (``/etc/profile.d``: Debian's ``/etc/profile`` resets
``PATH``) and in interactive ones (``/etc/bash.bashrc``). The repository is ``history.clean_copy``
at ``base_commit``, set up with the harness's lines (``harness.install_lines``: install step, then
the "SWE-bench" commit); that commit's id is kept in ``/opt/agentpost/swebench/setup_commit``
(read-only at run time) so a candidate's diff is taken against it, and what the install left
untracked (an egg-info the repository does not ignore, in-place builds) is listed in
``/opt/agentpost/swebench/untracked`` so a candidate's diff leaves it out.

Scaffold layouts: SWE-bench runs were recorded in other places than ``/testbed``, so the image
links those to it: SWE-agent 0.x kept the repository at ``/<owner>__<name>`` and OpenHands links
``/workspace/<owner>__<name>__<version>`` to ``/testbed`` itself (its ``instance_swe_entry.sh``);
``/workspace`` is writable in the sandbox (``WORKSPACE``: OpenHands writes its scratch files
there). The links come last in the Dockerfile, so images built before them keep their layers.
The system Python holds no package of its own (``SYSTEM_CLEAN``: the build base's pytest and uv
go), as the harness's images: an agent that calls ``/usr/bin/python3 -m pytest`` fails there too.

Offline grading: the harness's eval script runs the install step again; the build fetches that
step's build requirements into ``/opt/agentpost/wheels`` and the image ends with
``PIP_NO_INDEX=1 PIP_FIND_LINKS=/opt/agentpost/wheels``, so it runs with no network.

Caching: ``agentpost-swe-<instance>:<hash>``, the hash over the Dockerfile, every context file
but the repository, and ``base_commit`` (which fixes the repository's bytes). The environment's
layers come first, so instances with one environment share them (docker's layer cache).

Layer: io.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from agentpost.errors import InfraError
from agentpost.sandbox.images import base_tag, build, ensure_base, image_exists
from agentpost.tasks.swebench import harness, history
from agentpost.tasks.swebench.instance import Instance

RECIPE_VERSION = "3"
VENV = f"/opt/miniconda3/envs/{harness.ENV_NAME}"
STATE = "/opt/agentpost/swebench"
SETUP_COMMIT = f"{STATE}/setup_commit"
BUILT = f"{STATE}/untracked"  # what the install left untracked in /testbed (egg-info, builds)
WHEELS = "/opt/agentpost/wheels"
WORKSPACE = "/workspace"
# pip, setuptools and wheel as a conda Python env held them when the harness's images were built
# (2024), not the newest: pip >= 25.3 installs every editable through PEP 660, whose import hook
# keeps /testbed off sys.path, where pip 24.0 still runs `setup.py develop` for a project with no
# pyproject.toml (an egg-link: /testbed on sys.path). pylint 2.x finds its own checkers by file
# path through sys.path (astroid.modutils): with the hook none load and its tests fail, gold too.
BOOTSTRAP = ("pip==24.0", "setuptools==69.5.1", "wheel==0.43.0")
# the build base's pip-installed tools for Harbor tasks (pytest, uv) leave the system Python: the
# harness's images have none there, so `/usr/bin/python3 -m pytest` fails as it did in the run
SYSTEM_CLEAN = (
    "for d in /usr/local/lib/python3*/dist-packages; do"
    ' p=$(python3 -m pip list --path "$d" --format freeze 2>/dev/null | cut -d= -f1);'
    ' [ -z "$p" ] || python3 -m pip uninstall -y -q $p; done'
)
ACTIVATE = """\
# agentpost: a conda-free stand-in for miniconda's activate. Environments are Debian venvs in
# /opt/miniconda3/envs; `conda activate NAME` activates one (no other conda command exists).
conda() {
  case "${1:-}" in
    activate) . "/opt/miniconda3/envs/${2:-testbed}/bin/activate" && export CONDA_DEFAULT_ENV="${2:-testbed}" ;;
    deactivate) deactivate 2>/dev/null; unset CONDA_DEFAULT_ENV ;;
    *) echo "conda ${1:-}: not available here (no conda in this image)" >&2; return 1 ;;
  esac
}
"""
PROFILE = f'export VIRTUAL_ENV={VENV} CONDA_DEFAULT_ENV=testbed PATH="{VENV}/bin:$PATH"\n'


def base_for(release: str, backend, log) -> str:
    """The tag of the build base (compilers, git, python3) for Debian ``release``, built unless
    it exists (``sandbox.images``: one base set per release)."""
    return ensure_base(backend, "build", log=log, suite=release)


def base_name(release: str) -> str:
    """The tag the build base for ``release`` has, whether or not it is built yet."""
    return base_tag("build", suite=release)


def _pip(args: list[str]) -> str:
    return "python -m pip install --no-cache-dir " + " ".join(shlex.quote(a) for a in args)


def env_script(env: dict[str, Any]) -> str:
    lines = ["#!/bin/bash", "set -euxo pipefail", "source /opt/miniconda3/bin/activate",
             "conda activate testbed", _pip(list(BOOTSTRAP))]  # fmt: skip
    if env["requirements"].strip():
        lines.append(_pip(["-r", f"{STATE}/requirements.txt"]))
    if env["conda"]:
        lines.append(_pip(env["conda"]))
    if env["pip"]:
        lines.append(_pip(env["pip"]))
    return "\n".join(lines) + "\n"


def build_requires(repo: Path) -> list[str]:
    """``[build-system] requires`` of the checkout (setuptools and wheel when it has none)."""
    try:
        doc = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
        reqs = doc.get("build-system", {}).get("requires", [])
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        reqs = []
    return [str(r) for r in reqs if isinstance(r, str)] or ["setuptools>=40.8.0", "wheel"]


def install_script(inst: Instance, spec: dict[str, Any], requires: list[str]) -> str:
    lines = ["#!/bin/bash", "set -euxo pipefail", f"chmod -R 777 {harness.REPO_DIR}",
             f"cd {harness.REPO_DIR}",
             # as the harness's clone steps: the reset after the chmod puts file modes back
             f"git reset --hard {inst.base_commit}", *harness.install_lines(inst, spec),
             f"git -C {harness.REPO_DIR} rev-parse HEAD > {SETUP_COMMIT}",
             f"git -C {harness.REPO_DIR} ls-files --others --exclude-standard --directory > {BUILT}",
             f"python -m pip download -q -d {WHEELS} {' '.join(shlex.quote(r) for r in requires)}"
             " || echo 'agentpost: build requirements not all fetched'"]  # fmt: skip
    return "\n".join(lines) + "\n"


def scaffold_links(inst: Instance) -> list[str]:
    """Where scaffolds that publish SWE-bench runs kept the repository (all linked to it)."""
    name = inst.repo.replace("/", "__")
    return [f"/{name}", f"{WORKSPACE}/{name}__{inst.version}"]


def dockerfile(base: str, links: list[str] | None = None) -> str:
    link = "".join(f" && ln -s {harness.REPO_DIR} {shlex.quote(p)}" for p in links or [])
    return f"""FROM {base}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
    python3-dev python3-venv && rm -rf /var/lib/apt/lists/*
COPY activate /opt/miniconda3/bin/activate
COPY profile.sh /etc/profile.d/testbed.sh
RUN python3 -m venv {VENV} && echo '. /etc/profile.d/testbed.sh' >> /etc/bash.bashrc \\
    && mkdir -p {STATE} {WHEELS}
COPY requirements.txt env.sh {STATE}/
RUN bash {STATE}/env.sh
COPY repo {harness.REPO_DIR}
COPY install.sh {STATE}/
RUN bash {STATE}/install.sh
RUN {SYSTEM_CLEAN} && mkdir -p /usr/local/bin {WORKSPACE}{link}
ENV VIRTUAL_ENV={VENV} CONDA_DEFAULT_ENV=testbed PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    PIP_NO_INDEX=1 PIP_FIND_LINKS={WHEELS}
WORKDIR {harness.REPO_DIR}
"""


def recipe(inst: Instance, spec: dict, env: dict, repo_dir: Path | None) -> dict[str, str]:
    """The context files but the repository (``repo_dir``: its clean copy, for the build
    requirements; None reads them later and hashes without them)."""
    requires = build_requires(repo_dir) if repo_dir is not None else []
    return {
        "activate": ACTIVATE,
        "profile.sh": PROFILE,
        "env.sh": env_script(env),
        "requirements.txt": env["requirements"],
        "install.sh": install_script(inst, spec, requires),
    }


def tag_for(inst: Instance, spec: dict, env: dict) -> str:
    """The image tag: a hash of the recipe (without the build requirements, which follow from
    ``base_commit``), the base's tag and ``base_commit``."""
    files = recipe(inst, spec, env, None)
    h = hashlib.sha256(RECIPE_VERSION.encode())
    h.update(dockerfile(base_name(env["release"]), scaffold_links(inst)).encode())
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    h.update(inst.base_commit.encode())
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in inst.instance_id.lower())
    return f"agentpost-swe-{name}:{h.hexdigest()[:12]}"


def ensure(
    inst: Instance, spec: dict, env: dict, source: Path, backend, log=None
) -> tuple[str, dict]:
    """(tag, build facts) for the instance's image, built unless it exists."""
    log = log or (lambda _m: None)
    tag = tag_for(inst, spec, env)
    if image_exists(backend, tag):
        return tag, {"built": False}
    base = base_for(env["release"], backend, log)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="agentpost-swe-") as tmp:
        ctx = Path(tmp)
        history.clean_copy(source, inst.base_commit, ctx / "repo")
        for name, text in recipe(inst, spec, env, ctx / "repo").items():
            (ctx / name).write_text(text, encoding="utf-8")
        log(f"building {tag} on {base}")
        try:
            build(backend, tag, dockerfile(base, scaffold_links(inst)), str(ctx), 3600.0)
        except InfraError as e:
            raise InfraError(f"{inst.instance_id}: {e}") from None
        finally:
            shutil.rmtree(ctx / "repo", ignore_errors=True)
    size = backend.cli("image", "inspect", "--format", "{{.Size}}", tag, timeout_s=30).strip()
    return tag, {
        "built": True,
        "build_s": round(time.monotonic() - t0, 1),
        "size_bytes": int(size or 0),
    }
