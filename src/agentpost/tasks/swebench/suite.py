"""A SWE-bench suite: ``swebench.toml`` naming the user's instance file and repository clones.

```toml
instances = "verified.jsonl"          # SWE-bench's published fields: a JSON list or JSON lines
[repos]                               # a local clone or mirror per repository (never fetched)
"sympy/sympy" = "/data/mirrors/sympy"
[specs."me/toy"."0.1"]                # only for a repository the harness has no specs for
python = "3.11"
install = "python -m pip install -e ."
test_cmd = "pytest -rA"
parser = "pytest"                     # the harness's parse_log_<parser>
```

Paths are relative to the file. Each instance becomes a ``Task`` (format ``swebench``, work
directory ``/testbed``, the problem statement as instruction). Its ``metadata`` holds the
instance, the harness's spec, the environment plan (``env.plan``) and ``deviations``; its folder
(``Task.path``, under ``$AGENTPOST_SWEBENCH_CACHE`` or ``~/.cache/agentpost/swebench``) holds
``instance.json`` and ``solution/solve.sh`` (applies the gold patch: ``tasks check``'s oracle).
Nothing of SWE-bench's data ships with agentpost.

An instance that does not load (bad field, no repository, unknown commit, no spec) is skipped
and reported, like a broken task directory; so is one that failed its gold gate (``gate.py``).

Layer: io.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

from agentpost.documents.write import atomic_write
from agentpost.errors import InputError
from agentpost.tasks.fields import read_text
from agentpost.tasks.model import Task
from agentpost.tasks.swebench import env as envs
from agentpost.tasks.swebench import gate, harness, history, image
from agentpost.tasks.swebench.cache import cache_root
from agentpost.tasks.swebench.instance import Instance, parse_instance

CONFIG = "swebench.toml"
SOLVE = """#!/bin/bash
# agentpost: the instance's gold patch, applied as the harness applies a prediction
set -e
cd /testbed
git apply --verbose /solution/gold.patch || patch --batch --fuzz=5 -p1 -i /solution/gold.patch
"""


def read_config(path: Path) -> dict[str, Any]:
    try:
        doc = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as e:
        raise InputError(path, None, f"not TOML: {e}") from None
    if not isinstance(doc.get("instances"), str):
        raise InputError(path, "instances", "must name the instance file (a string)")
    repos = doc.get("repos", {})
    if not isinstance(repos, dict) or not all(isinstance(v, str) for v in repos.values()):
        raise InputError(path, "repos", 'must be a table of "owner/name" = "clone path"')
    specs = doc.get("specs", {})
    if not isinstance(specs, dict):
        raise InputError(path, "specs", "must be a table of repositories")
    for repo, versions in specs.items():
        if not isinstance(versions, dict) or not all(
            isinstance(s, dict) for s in versions.values()
        ):
            raise InputError(path, f"specs.{repo}", "must be a table of versions")
        for ver, spec in versions.items():
            bad = set(spec) - harness.SPEC_KEYS
            if bad or not isinstance(spec.get("test_cmd"), str):
                why = f"unknown keys {sorted(bad)}" if bad else "test_cmd must be a string"
                raise InputError(path, f"specs.{repo}.{ver}", why)
    return doc


def read_instances(path: Path) -> list[tuple[str, Any]]:
    """(place, record) pairs of a JSON list or a JSON-lines file."""
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except ValueError as e:
            raise InputError(path, None, f"not JSON: {e}") from None
        return [(f"[{i}]", r) for i, r in enumerate(data)]
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append((f"line {n}", json.loads(line)))
            except ValueError as e:
                raise InputError(path, f"line {n}", f"not JSON: {e}") from None
    return out


def load(config_path: Path, errors: list[InputError]) -> list[Task]:
    """Every instance of the suite at ``config_path`` as a task; what does not load goes to
    ``errors``."""
    doc = read_config(config_path)
    root = config_path.parent
    for repo, versions in doc.get("specs", {}).items():
        for ver, spec in versions.items():
            harness.register(repo, ver, spec, str(config_path))
    inst_path = (root / doc["instances"]).resolve()
    repos = {k: (root / v).resolve() for k, v in doc.get("repos", {}).items()}
    tasks, seen = [], set()
    for where, rec in read_instances(inst_path):
        try:
            inst = parse_instance(rec, str(inst_path), where)
            if inst.instance_id in seen:
                raise InputError(inst_path, where, f"instance {inst.instance_id} given twice")
            seen.add(inst.instance_id)
            tasks.append(to_task(inst, repos, config_path, str(inst_path)))
        except InputError as e:
            errors.append(e)
    return tasks


def to_task(inst: Instance, repos: dict[str, Path], config_path: Path, inst_path: str) -> Task:
    source = repos.get(inst.repo)
    if source is None or not source.is_dir():
        raise InputError(
            config_path, f"repos.{inst.repo}", f"no local clone for {inst.instance_id}"
        )
    history.resolve_commit(source, inst.base_commit, f"{inst.instance_id}.base_commit")
    spec = harness.specs(inst, inst_path)
    env = envs.plan(inst, spec, source)
    meta = {"swebench": inst.harness_dict(), "spec": spec, "env": env,
            "source": str(source), "deviations": env["deviations"]}  # fmt: skip
    hit = gate.cached(image.tag_for(inst, spec, env))
    if hit is not None and not hit.get("ok"):
        raise InputError(gate.gate_path(hit["image"]), inst.instance_id,
                         f"failed its gold gate, not used ({gate.why(hit)})")  # fmt: skip
    folder = materialise(inst, meta)
    return Task(
        id=inst.instance_id,
        path=folder,
        format="swebench",
        instruction=inst.problem_statement,
        workdir=harness.REPO_DIR,
        agent_timeout_s=3600.0,
        verifier_timeout_s=1800.0,  # the harness's default eval timeout
        solution_script=folder / "solution" / "solve.sh",
        metadata=meta,
        extra_writable_dirs=(image.WORKSPACE,),
    )


def materialise(inst: Instance, meta: dict[str, Any]) -> Path:
    """The task's folder: ``instance.json`` and the gold solution, written once per content."""
    doc = json.dumps({k: meta[k] for k in ("swebench", "spec", "env")}, sort_keys=True, indent=1)
    digest = hashlib.sha256(doc.encode()).hexdigest()[:12]
    folder = cache_root() / f"{inst.instance_id}-{digest}"
    if not (folder / "solution" / "solve.sh").is_file():
        (folder / "solution").mkdir(parents=True, exist_ok=True)
        atomic_write(folder / "instance.json", doc)
        atomic_write(folder / "solution" / "gold.patch", inst.patch)
        atomic_write(folder / "solution" / "solve.sh", SOLVE)
    return folder
