"""`agentpost images`: the FROM table is printed with its overrides; builds are cached by hash and
a task that cannot be built offline is reported with its reason, without stopping the others."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from agentpost.cli import _register, app


def _run(*args: str):
    _register()
    return CliRunner().invoke(app, list(args))


def test_images_table_shows_overrides(tmp_path):
    out = _run("images", "table", "--json")
    doc = json.loads(out.stdout)
    table = doc["from"]
    assert table["ubuntu:*"] == "python@trixie" and table["alpine:*"].startswith("unsupported")
    row = next(r for r in doc["rows"] if r["pattern"] == "python:3.13*")
    assert (row["base"], row["release"], row["python"]) == ("python@trixie", "trixie", "3.13")
    f = tmp_path / "t.toml"
    f.write_text('[from]\n"ubuntu:*" = "build"\n')
    over = json.loads(_run("images", "table", "--json", "--from-table", str(f)).stdout)
    assert over["from"]["ubuntu:*"] == "build"
    text = _run("images", "table").stdout
    assert "python:3.10*" in text and "bookworm  3.11" in text
    assert "musl/apk, no Alpine mirror" in text


def test_images_table_says_where_each_task_from_maps(tmp_path, shared_data):
    harbor = shared_data / "tasks" / "harbor-examples"
    shutil.copytree(harbor / "hello-world", tmp_path / "hello-world")
    shutil.copytree(harbor / "hello-world", tmp_path / "on-alpine")
    (tmp_path / "on-alpine" / "environment" / "Dockerfile").write_text("FROM alpine:3.19\n")
    doc = json.loads(_run("images", "table", "--json", "--suite", str(tmp_path)).stdout)
    assert doc["tasks"]["hello-world"] == [{"image": "ubuntu:24.04", "target": "python@trixie"}]
    assert "musl" in doc["tasks"]["on-alpine"][0]["target"]
    text = _run("images", "table", "--suite", str(tmp_path)).stdout
    assert "task hello-world" in text and "FROM ubuntu:24.04" in text and "-> python@trixie" in text


def test_images_build_reports_unbuildable_tasks(tmp_path, shared_data):
    from agentpost.sandbox.docker import DockerBackend

    if not DockerBackend().available():
        pytest.skip("no docker daemon answers (bash scripts/dockerd.sh start)")
    harbor = shared_data / "tasks" / "harbor-examples"
    shutil.copytree(harbor / "hello-world", tmp_path / "hello-world")
    shutil.copytree(harbor / "hello-world", tmp_path / "on-alpine")
    (tmp_path / "on-alpine" / "environment" / "Dockerfile").write_text("FROM alpine:3.19\n")
    out = _run("images", "build", "--base", "python", "--suite", str(tmp_path))
    assert out.exit_code == 1, out.stdout
    assert "base python" in out.stdout and "task hello-world" in out.stdout
    assert "FAIL on-alpine" in out.stdout and "musl" in out.stdout
