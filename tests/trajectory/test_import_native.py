"""The compiled import path (mypyc, ``trajectory/_native.py``) against the interpreted one: the
same output byte for byte on every sample and on mutated samples; a build that no longer
matches its sources is never used; the list of sources a build depends on is complete."""

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import mutated_inputs
import pytest

from agentpost.trajectory import _native
from agentpost.trajectory.importers import mini_swe_agent

HERE = Path(__file__).resolve().parent
COMPILED = _native.status().startswith("compiled")
needs_build = pytest.mark.skipif(not COMPILED, reason=f"import runs {_native.status()}")


def _interpreted(paths: list[Path]) -> list[list]:
    """``mutated_inputs.outcomes`` in a child process that runs the ``.py`` sources."""
    code = (
        # tests/trajectory (mutated_inputs) and tests/ (shared_data, which mutated_inputs reads)
        "import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import mutated_inputs as m\n"
        "from agentpost.trajectory import _native\n"
        "assert _native.status().startswith('interpreted'), _native.status()\n"
        "paths = [m.Path(p) for p in sys.stdin.read().splitlines()]\n"
        "sys.stdout.write(json.dumps(m.outcomes(paths)))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(HERE), str(HERE.parent)],
        input="\n".join(map(str, paths)),
        capture_output=True,
        text=True,
        env={**os.environ, _native.OFF: "1"},
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
    assert Path(mini_swe_agent.__file__).parent == _native.BUILD
    assert mini_swe_agent.__file__.endswith(".so")


@needs_build
def test_every_sample_imports_the_same_compiled_and_interpreted(shared_data):
    kinds = _assert_same(_native_samples())
    assert kinds["ok"] > 40, kinds


def _native_samples() -> list[Path]:
    from agentpost.trajectory.importing import iter_files

    return iter_files([mutated_inputs.DATA, mutated_inputs.SYNTHETIC])


@needs_build
def test_mutated_samples_import_the_same_compiled_and_interpreted(shared_data, tmp_path):
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
        "modules": {
            f"{_native.PACKAGE}.{m}": f"{m}{suffix}"
            for m in (*_native.COMPILED, *_native.C_EXTENSIONS)
        },
        "runtime": ["rt__mypyc", f"rt__mypyc{suffix}"],
    }
    assert _native.fresh(good, hashes, suffix)
    edited = {**hashes, "importers.mini_swe_agent": "0" * 64}
    assert not _native.fresh(good, edited, suffix)  # an importer edited after the build
    assert not _native.fresh(good, hashes, ".cpython-312-x86_64-linux-gnu.so")
    fewer = {**good, "modules": dict(list(good["modules"].items())[1:])}
    assert not _native.fresh(fewer, hashes, suffix)
    assert not _native.fresh({}, hashes, suffix)


def test_the_build_depends_on_everything_its_modules_import():
    """Every agentpost module a compiled module imports is in ``SOURCES`` (its types are
    compiled in: a change there must make the build stale)."""
    sources = {_native.source_path(n).resolve() for n in _native.SOURCES}
    src = _native.HERE.parent.parent  # .../src
    for name in _native.COMPILED:
        tree = ast.parse(_native.source_path(name).read_text())
        for node in ast.walk(tree):
            mods = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            for mod in mods:
                if not mod.startswith("agentpost"):
                    continue
                base = src / mod.replace(".", "/")
                for f in (base.with_suffix(".py"), base / "__init__.py"):
                    if f.is_file():
                        assert f.resolve() in sources, f"{name} imports {mod}: add it to DEPENDS"


def test_an_edited_source_runs_interpreted(tmp_path):
    """A copy of the package whose build is current, then one importer edited: a new process
    imports the edited ``.py``, not the binary."""
    if not COMPILED:
        pytest.skip(f"import runs {_native.status()}")
    copy = tmp_path / "src"
    shutil.copytree(
        _native.HERE.parent, copy / "agentpost", ignore=shutil.ignore_patterns("__pycache__")
    )
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from agentpost.trajectory import _native\n"
        "from agentpost.trajectory.importers import mini_swe_agent as m\n"
        "print(_native.status()); print(m.__file__)\n"
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


@needs_build
def test_memmem_find_is_bytes_find():
    """``_findc.find`` (detection's memmem) answers what ``bytes.find`` answers, on JSON-like
    text, for needles present, absent, at the edges and empty, over every kind of range."""
    import random

    from agentpost.trajectory.importers import _findc

    rng = random.Random(9)
    alphabet = b'"{}:, abcdekmnorsu_\n'
    for _ in range(3000):
        raw = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 3000)))
        k = rng.randint(0, 12)
        pos = rng.randint(0, len(raw))
        needle = (
            raw[pos : pos + k]
            if rng.random() < 0.6
            else bytes(rng.choice(alphabet) for _ in range(k))
        )
        n = len(raw)
        start, end = sorted((rng.randint(-5, n + 5), rng.randint(-5, n + 5)))
        if rng.random() < 0.1:
            start, end = end, start
        assert _findc.find(raw, needle, start, end) == raw.find(needle, start, end), (
            needle,
            start,
            end,
        )


def test_ci_runs_the_compiled_import_path():
    """``.ci/run`` sets ``AGENTPOST_EXPECT_NATIVE=1``: there the build must be in use, so the
    suite exercises the compiled path and a failed build cannot pass unnoticed."""
    if os.environ.get("AGENTPOST_EXPECT_NATIVE") != "1":
        pytest.skip("AGENTPOST_EXPECT_NATIVE is not set (only CI requires the build)")
    assert COMPILED, _native.status()
