"""The one place that imports the ``swebench`` package (SWE-bench's harness, 4.x), lazily.

What comes from the harness, imported and never copied: the per-version specs
(``MAP_REPO_VERSION_TO_SPECS``: Python version, packages, pip pins, pre-install and install
commands, the test command), the repository set-up lines after the clone
(``make_repo_script_list_py``: its install step and the "SWE-bench" commit that makes ``git diff``
show only the agent's changes), the evaluation script (``make_eval_script_list_py``: reset the
test files, apply ``test_patch``, run the test command between the output markers), the log
parser for the repository (``MAP_REPO_TO_PARSER``) and the report (``get_eval_report``: resolved
iff every FAIL_TO_PASS and PASS_TO_PASS test passes, the ``report.json`` shape).

A repository the harness has no specs for (a synthetic one, a fork) takes its specs from the
suite's ``[specs."owner/name"."version"]`` table; they are added to the harness's tables for this
process (never replacing one of the harness's own entries), with ``parser = NAME`` choosing the
harness's ``parse_log_NAME``.

Layer: io.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from agentpost.errors import InputError
from agentpost.tasks.swebench.instance import Instance

ENV_NAME = "testbed"
REPO_DIR = "/testbed"
INSTALL_HINT = "the SWE-bench extra is not installed: run bash scripts/setup.sh --swebench"
_CLONE_END = "source /opt/miniconda3/bin/activate"  # first line after the harness's clone steps
# fields a suite's own spec may give (the harness's spec keys, plus the parser's name)
SPEC_KEYS = {"python", "packages", "pip_packages", "pre_install", "install", "eval_commands",
             "test_cmd", "parser", "env_vars_test", "no_use_env"}  # fmt: skip


def modules() -> dict[str, Any]:
    """The harness's modules; an ``InputError`` saying how to install them when absent."""
    try:
        from swebench.harness import constants, grading, log_parsers
        from swebench.harness.log_parsers import python as py_parsers
        from swebench.harness.test_spec import python as py_spec
        from swebench.harness.test_spec.test_spec import TestSpec
    except ImportError as e:
        raise InputError(None, "swebench", f"{INSTALL_HINT} ({e})") from None
    return {
        "constants": constants,
        "grading": grading,
        "parsers": log_parsers,
        "py_parsers": py_parsers,
        "py_spec": py_spec,
        "TestSpec": TestSpec,
    }


def version() -> str:
    from importlib.metadata import version as v

    return v("swebench")


def register(repo: str, ver: str, spec: dict[str, Any], path: str) -> None:
    """Add a suite's own spec for ``repo`` ``ver`` to the harness's tables (only where the
    harness has none)."""
    m = modules()
    table = m["constants"].MAP_REPO_VERSION_TO_SPECS
    if ver in table.get(repo, {}):
        return
    parser_name = spec.get("parser", "pytest")
    parser = getattr(m["py_parsers"], f"parse_log_{parser_name}", None)
    if parser is None:
        raise InputError(
            path, f"specs.{repo}.{ver}.parser", f"the harness has no parse_log_{parser_name}"
        )
    table.setdefault(repo, {})[ver] = {k: v for k, v in spec.items() if k != "parser"}
    m["parsers"].MAP_REPO_TO_PARSER.setdefault(repo, parser)


def specs(inst: Instance, path: str) -> dict[str, Any]:
    """The harness's spec for the instance's repository and version."""
    table = modules()["constants"].MAP_REPO_VERSION_TO_SPECS
    spec = table.get(inst.repo, {}).get(inst.version)
    if spec is None:
        raise InputError(
            path,
            inst.instance_id,
            f"the SWE-bench harness has no specs for {inst.repo} version {inst.version}; "
            f'give them in the suite as [specs."{inst.repo}"."{inst.version}"]',
        )
    if "test_cmd" not in spec:
        raise InputError(
            path, inst.instance_id, f"specs for {inst.repo} {inst.version} lack test_cmd"
        )
    return spec


def install_lines(inst: Instance, spec: dict[str, Any]) -> list[str]:
    """The harness's repository set-up after its clone: activate, the repo's install, the
    pre-install and install steps, and the "SWE-bench" commit."""
    lines = modules()["py_spec"].make_repo_script_list_py(
        spec, inst.repo, REPO_DIR, inst.base_commit, ENV_NAME
    )
    return lines[lines.index(_CLONE_END) :] if _CLONE_END in lines else lines


def eval_script(inst: Instance, spec: dict[str, Any]) -> str:
    """The harness's evaluation script for the instance (``TestSpec.eval_script``'s framing)."""
    lines = modules()["py_spec"].make_eval_script_list_py(
        inst.harness_dict(), spec, ENV_NAME, REPO_DIR, inst.base_commit, inst.test_patch
    )
    return "\n".join(["#!/bin/bash", "set -uxo pipefail", *lines]) + "\n"


def test_spec(inst: Instance) -> Any:
    m = modules()
    return m["TestSpec"](
        instance_id=inst.instance_id, repo=inst.repo, version=inst.version,
        repo_script_list=[], eval_script_list=[], env_script_list=[], arch="x86_64",
        FAIL_TO_PASS=list(inst.FAIL_TO_PASS), PASS_TO_PASS=list(inst.PASS_TO_PASS),
        language="py", docker_specs={}, namespace=None,
    )  # fmt: skip


def report(inst: Instance, log: str, patch: str | None, model: str = "agentpost") -> dict:
    """The harness's ``report.json`` for ``log`` (the eval script's output, with the patch-apply
    lines before it), with every test's status."""
    m = modules()
    pred = {"instance_id": inst.instance_id, "model_name_or_path": model, "model_patch": patch}
    with tempfile.TemporaryDirectory(prefix="agentpost-swe-") as tmp:
        fp = os.path.join(tmp, "test_output.txt")
        with open(fp, "w", encoding="utf-8") as f:
            f.write(log)
        return m["grading"].get_eval_report(test_spec(inst), pred, fp, include_tests_status=True)


def markers() -> dict[str, str]:
    c = modules()["constants"]
    return {
        "apply_fail": c.APPLY_PATCH_FAIL,
        "apply_pass": c.APPLY_PATCH_PASS,
        "timeout": c.TESTS_TIMEOUT,
        "patch_file": c.DOCKER_PATCH if hasattr(c, "DOCKER_PATCH") else "/tmp/patch.diff",
    }
