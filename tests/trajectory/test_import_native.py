"""The compiled importers (mypyc, ``importers/_native.py``) against the interpreted ones: the
same output byte for byte on every sample and on mutated samples, and a build that no longer
matches its sources is never used."""

import json
import os
import subprocess
import sys
from pathlib import Path

import mutated_inputs
import pytest

from agentpost.trajectory.importers import _native, mini_swe_agent
from agentpost.trajectory.importing import iter_files

HERE = Path(__file__).resolve().parent
COMPILED = _native.status().startswith("compiled")
needs_build = pytest.mark.skipif(not COMPILED, reason=f"importers run {_native.status()}")


def _interpreted(paths: list[Path]) -> list[list]:
    """``mutated_inputs.outcomes`` in a child process that runs the ``.py`` sources."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import mutated_inputs as m;"
        "from agentpost.trajectory.importers import _native;"
        "assert _native.status().startswith('interpreted'), _native.status();"
        "paths = [m.Path(p) for p in sys.stdin.read().splitlines()];"
        "sys.stdout.write(json.dumps(m.outcomes(paths)))"
    )
    env = {**os.environ, _native.OFF: "1"}
    r = subprocess.run(
        [sys.executable, "-c", code, str(HERE)],
        input="\n".join(map(str, paths)),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


def _assert_same(paths: list[Path]) -> dict[str, int]:
    compiled = mutated_inputs.outcomes(paths)
    interpreted = _interpreted(paths)
    for p, a, b in zip(paths, compiled, interpreted, strict=True):
        assert a == b, f"{p}: compiled {a[:3]!r:.600} != interpreted {b[:3]!r:.600}"
    kinds: dict[str, int] = {}
    for a in compiled:
        kinds[a[0]] = kinds.get(a[0], 0) + 1
    return kinds


@needs_build
def test_the_compiled_build_is_in_use():
    assert mini_swe_agent.__file__.endswith(
        _native.MANIFEST.parent.name + "/" + Path(mini_swe_agent.__file__).name
    )
    assert not mini_swe_agent.__file__.endswith(".py")


@needs_build
def test_every_sample_imports_the_same_compiled_and_interpreted():
    paths = iter_files([mutated_inputs.DATA, mutated_inputs.SYNTHETIC])
    kinds = _assert_same(paths)
    assert kinds["ok"] > 40, kinds


@needs_build
def test_mutated_samples_import_the_same_compiled_and_interpreted(tmp_path):
    paths = mutated_inputs.json_files(tmp_path / "json", 400, seed=11)
    paths += mutated_inputs.jsonl_files(tmp_path / "jsonl", 200, seed=12)
    kinds = _assert_same(paths)
    assert kinds["ok"] > 100 and kinds["error"] > 30, kinds


def test_a_stale_or_foreign_build_is_not_fresh():
    hashes = _native.source_hashes()
    suffix = ".cpython-311-x86_64-linux-gnu.so"
    good = {
        "sources": hashes,
        "suffix": suffix,
        "modules": {f"{_native.PACKAGE}.{m}": f"{m}{suffix}" for m in _native.COMPILED},
        "runtime": ["rt__mypyc", f"rt__mypyc{suffix}"],
    }
    assert _native.fresh(good, hashes, suffix)
    edited = {**hashes, "mini_swe_agent": "0" * 64}
    assert not _native.fresh(good, edited, suffix)  # an importer edited after the build
    assert not _native.fresh(good, hashes, ".cpython-312-x86_64-linux-gnu.so")
    fewer = {**good, "modules": dict(list(good["modules"].items())[1:])}
    assert not _native.fresh(fewer, hashes, suffix)
    assert not _native.fresh({}, hashes, suffix)


def test_an_edited_source_runs_interpreted(tmp_path):
    """A copy of the package whose build is current, then one importer edited: the child
    process imports the edited ``.py``, not the binary."""
    if not COMPILED:
        pytest.skip(f"importers run {_native.status()}")
    src = Path(_native.__file__).parents[3]  # .../src
    copy = tmp_path / "src"
    import shutil

    shutil.copytree(
        src / "agentpost", copy / "agentpost", ignore=shutil.ignore_patterns("__pycache__")
    )
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from agentpost.trajectory.importers import _native, mini_swe_agent as m;"
        "print(_native.status()); print(m.__file__)"
    )

    def run():
        r = subprocess.run([sys.executable, "-c", probe, str(copy)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout.splitlines()

    status, file = run()
    assert status.startswith("compiled") and file.endswith(".so"), (status, file)
    target = copy / "agentpost" / "trajectory" / "importers" / "mini_swe_agent.py"
    target.write_text(target.read_text() + "\n# edited\n")
    status, file = run()
    assert "stale" in status and file == str(target), (status, file)
