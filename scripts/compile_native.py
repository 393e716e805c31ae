"""Compile the import path's hot modules with mypyc into src/agentpost/trajectory/_build/.

Run by scripts/setup.sh (about 30 s on 2 cores); rerun after editing a compiled module or one
it imports (until then the sources run interpreted: see ``agentpost/trajectory/_native.py``).
Needs mypy and setuptools (the dev extra) and a C compiler; without them it says so and exits
1, and import runs interpreted. ``--clean`` removes the build.
Run: ``.venv/bin/python scripts/compile_native.py [--clean]``.
"""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
sys.path.insert(0, str(SRC))
os.environ["AGENTPOST_PURE_IMPORT"] = "1"  # build from the sources, never from an old build

from agentpost.trajectory import _native  # noqa: E402

GROUP = "agentpost_native"  # mypyc's shared module: agentpost_native__mypyc

SETUP = """
import json, sys
from setuptools import Extension, setup
from mypyc.build import mypycify
paths, c_modules = json.loads(sys.argv.pop())
setup(name="agentpost-native", package_dir={"": "src"},
      ext_modules=mypycify(paths, opt_level="3", group_name="%s", target_dir=%r)
      + [Extension(name, [src], extra_compile_args=["-O2"]) for name, src in c_modules])
"""


def build(dest: Path) -> None:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    hashes = _native.source_hashes()
    paths = [str(_native.source_path(m).relative_to(ROOT)) for m in _native.COMPILED]
    c_modules = [
        [f"{_native.PACKAGE}.{m}", str(_native.source_path(m).relative_to(ROOT))]
        for m in _native.C_EXTENSIONS
    ]
    with tempfile.TemporaryDirectory(prefix="agentpost-mypyc-") as tmp:
        t = Path(tmp)
        (t / "setup.py").write_text(SETUP % (GROUP, str(t / "c")))
        out = t / "lib"
        cmd = [sys.executable, str(t / "setup.py"), "build_ext", "--build-lib", str(out)]
        cmd += ["--build-temp", str(t / "obj"), orjson.dumps([paths, c_modules]).decode()]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
            raise SystemExit("compile_native: mypyc failed; import runs interpreted")
        if _native.source_hashes() != hashes:
            raise SystemExit("compile_native: a source changed while compiling; run it again")
        staged = dest.with_name(dest.name + ".new")  # beside dest: the rename below is atomic
        shutil.rmtree(staged, ignore_errors=True)
        staged.mkdir()
        modules = {}
        for m in (*_native.COMPILED, *_native.C_EXTENSIONS):
            name = f"{_native.PACKAGE}.{m}"
            built = out / Path(*name.split(".")).with_suffix("")
            shutil.copy(built.with_name(built.name + suffix), staged / f"{m}{suffix}")
            modules[name] = f"{m}{suffix}"  # (flat: "importers._file" keeps its dot)
        runtime = f"{GROUP}__mypyc"
        shutil.copy(out / f"{runtime}{suffix}", staged / f"{runtime}{suffix}")
        manifest = {
            "sources": hashes,
            "suffix": suffix,
            "modules": modules,
            "runtime": [runtime, f"{runtime}{suffix}"],
            "mypy": _mypy_version(),  # for a reader: freshness is the hashes and the suffix
        }
        (staged / "manifest.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
        old = dest.with_name(dest.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if dest.exists():
            dest.rename(old)
        staged.rename(dest)  # the manifest arrives with its files, never before them
        shutil.rmtree(old, ignore_errors=True)


def _mypy_version() -> str:
    from mypy.version import __version__

    return __version__


def main() -> None:
    dest = _native.BUILD
    if "--clean" in sys.argv[1:]:
        shutil.rmtree(dest, ignore_errors=True)
        print(f"removed {dest.relative_to(ROOT)}")
        return
    try:
        import mypyc.build  # noqa: F401
        import setuptools  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"compile_native: {e.name} is missing (pip install -e '.[dev]')") from None
    build(dest)
    n = len(_native.COMPILED) + len(_native.C_EXTENSIONS)
    print(f"compiled {n} modules into {dest.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
