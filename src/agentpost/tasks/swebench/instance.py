"""One SWE-bench instance in the published fields, checked.

The fields are SWE-bench's (``instance_id``, ``repo``, ``base_commit``, ``patch``, ``test_patch``,
``FAIL_TO_PASS``, ``PASS_TO_PASS``, ``version``, ``environment_setup_commit``; ``problem_statement``
and ``hints_text`` optional). ``FAIL_TO_PASS`` / ``PASS_TO_PASS`` may be lists or, as published on
the Hub, JSON strings of lists. A field that is missing or of the wrong type is an ``InputError``
naming the file and the instance's place in it.

Layer: model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agentpost.errors import InputError
from agentpost.tasks.model import Task

REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "version")
TEST_LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")
_SHA = re.compile(r"[0-9a-f]{7,40}")
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_ID = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Instance:
    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    version: str
    FAIL_TO_PASS: tuple[str, ...]
    PASS_TO_PASS: tuple[str, ...]
    environment_setup_commit: str
    problem_statement: str = ""
    hints_text: str = ""

    def harness_dict(self) -> dict[str, Any]:
        """The instance as the harness's functions take it (``SWEbenchInstance``)."""
        return {
            "instance_id": self.instance_id,
            "repo": self.repo,
            "base_commit": self.base_commit,
            "patch": self.patch,
            "test_patch": self.test_patch,
            "version": self.version,
            "FAIL_TO_PASS": list(self.FAIL_TO_PASS),
            "PASS_TO_PASS": list(self.PASS_TO_PASS),
            "environment_setup_commit": self.environment_setup_commit,
            "problem_statement": self.problem_statement,
            "hints_text": self.hints_text,
        }


def _tests(obj: dict, key: str, path: str, where: str) -> tuple[str, ...]:
    value = obj.get(key, [])
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise InputError(path, f"{where}.{key}", "not a JSON list of test names") from None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InputError(path, f"{where}.{key}", "must be a list of test names (strings)")
    return tuple(value)


def parse_instance(obj: Any, path: str, where: str) -> Instance:
    """``obj`` (one parsed record) → ``Instance``; ``where`` names its place (``line 3``)."""
    if not isinstance(obj, dict):
        raise InputError(path, where, "an instance must be a JSON object")
    for key in REQUIRED:
        if not isinstance(obj.get(key), str) or (key != "patch" and not obj[key]):
            raise InputError(path, f"{where}.{key}", "missing or not a non-empty string")
    iid = obj["instance_id"]
    if not _ID.fullmatch(iid):
        raise InputError(path, f"{where}.instance_id", f"{iid!r} is not a plain name")
    if not _REPO.fullmatch(obj["repo"]):
        raise InputError(path, f"{where}.repo", f"{obj['repo']!r} is not owner/name")
    if not _ID.fullmatch(obj["version"]) or obj["version"].startswith("."):
        raise InputError(path, f"{where}.version", f"{obj['version']!r} is not a plain version")
    env_commit = obj.get("environment_setup_commit") or obj["base_commit"]
    for key, sha in (("base_commit", obj["base_commit"]), ("environment_setup_commit", env_commit)):
        if not isinstance(sha, str) or not _SHA.fullmatch(sha):
            raise InputError(path, f"{where}.{key}", f"{sha!r} is not a commit id (hex)")
    for key in ("problem_statement", "hints_text"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise InputError(path, f"{where}.{key}", "must be a string")
    return Instance(
        instance_id=iid,
        repo=obj["repo"],
        base_commit=obj["base_commit"],
        patch=obj["patch"],
        test_patch=obj["test_patch"],
        version=obj["version"],
        FAIL_TO_PASS=_tests(obj, "FAIL_TO_PASS", path, where),
        PASS_TO_PASS=_tests(obj, "PASS_TO_PASS", path, where),
        environment_setup_commit=env_commit,
        problem_statement=obj.get("problem_statement") or "",
        hints_text=obj.get("hints_text") or "",
    )


def instance_of(task: Task) -> Instance:
    """The instance a loaded SWE-bench task was made from (``task.metadata["swebench"]``)."""
    return parse_instance(task.metadata["swebench"], str(task.path), task.id)
