"""Serve a task's run-time installs offline: runs *inside* a task image, at build time.

``sandbox.provision`` reads what the task's scripts install and appends to its Dockerfile a
step that copies this file, ``provision_apt.py`` and ``needs.json`` into the image and runs
``python3 this needs.json`` as root while the build still has the network. The two import only
the standard library (Python 3.9 or newer: bullseye's) and each other; agentpost never imports
them. It

1. apt (``provision_apt.py``): downloads every ``.deb`` each ``apt-get install`` would fetch from the image's own
   sources and state (recommends as the command asks), and each ``apt-get source`` package,
   into ``/opt/agentpost/apt``, writes ``Packages``/``Sources``/``Release`` for it (a flat
   repository, ``[trusted=yes]``), moves the image's sources to
   ``/opt/agentpost/apt/online-sources`` and points apt at the local repository only, with no
   retries (an unreachable source the agent adds later is a warning, exit 0, as online);
2. pip: downloads wheels (and dependencies) for each interpreter that will install them into
   ``/opt/agentpost/wheels`` (another minor version than python3's: binary wheels for it),
   builds sdists into wheels where it can, and always adds setuptools and wheel so a local
   project builds offline; writes ``/etc/pip.conf`` (no index, find-links);
3. uv: installs the uv version a test's installer line names; replays ``uv init`` + ``uv add``
   into ``/opt/agentpost/uv-cache`` (uv resolves a project for every platform);
4. npm: fills ``/opt/agentpost/npm-cache`` for each ``npm install``;
5. interpreters: each Python a ``uv venv -p`` / ``uv run -p`` / ``uv pip install --python``
   asks must be in the image (uv may not download one offline): one it lacks is named, with the
   file and command that ask it and the Pythons the image has.

An apt pin this release does not have (an Ubuntu build such as ``4.3.3-2build2``, a Debian
point release since superseded) is served by the release's own version of that package, listed
under the pinned version as well (the same file: dpkg installs and records the real version),
and reported as substituted. Whatever cannot be served is written, with the tool's own reason,
to ``/opt/agentpost/provision/report.json``; the step itself succeeds unless this file fails.

Layer: io.
"""

import json
import os
import re
import shutil
import sys
import tempfile

from provision_apt import each, provision_apt, run, why  # beside this file in the image

ROOT = "/opt/agentpost"
WHEELS = ROOT + "/wheels"
PIP_INDEX = ROOT + "/pip-index"  # a PEP 503 index of WHEELS: pip's default index, offline
UV_CACHE = ROOT + "/uv-cache"
NPM_CACHE = ROOT + "/npm-cache"
REPORT = ROOT + "/provision/report.json"
PY3 = "{}.{}".format(*sys.version_info[:2])


def interpreter(version):
    """(python executable with pip, or None) for a minor version."""
    if version in ("", PY3):
        return sys.executable
    exe = shutil.which("python" + version)
    if exe and run([exe, "-m", "pip", "--version"])[0] == 0:
        return exe
    return None


def provision_pip(needs, report):
    os.makedirs(WHEELS, exist_ok=True)
    wanted = dict(needs["pip"])
    wanted.setdefault("", [])
    wanted[""] = sorted(set(wanted[""]) | {"setuptools", "wheel"})
    for version, reqs in sorted(wanted.items()):
        exe = interpreter(version)
        if exe is not None:
            base = [exe, "-m", "pip", "download", "--no-cache-dir", "-d", WHEELS]
        else:
            base = [sys.executable, "-m", "pip", "download", "--no-cache-dir", "-d", WHEELS,
                    "--only-binary=:all:", "--python-version", version]  # fmt: skip
        label = "Python " + (version or PY3)
        for req, reason in each(reqs, lambda items, base=base: run(base + items)):
            report["unservable"].append({"what": f"pip {req} ({label})", "why": reason})
    for name in sorted(os.listdir(WHEELS)):
        if name.endswith((".tar.gz", ".zip", ".tar.bz2")):
            rc, out = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
                           "-w", WHEELS, os.path.join(WHEELS, name)])  # fmt: skip
            if rc != 0:
                report["notes"].append(f"sdist {name} kept unbuilt: {why(out)}")
    report["served"]["wheels"] = len([n for n in os.listdir(WHEELS) if n.endswith(".whl")])
    write_index(WHEELS, PIP_INDEX)


def write_index(wheels, index):
    """A PEP 503 simple index of the files in ``wheels``: pip's index (not ``no-index``), so a
    command's own ``--index-url`` (a server the task runs on localhost) is still used."""
    projects = {}
    for name in sorted(os.listdir(wheels)):
        if name.endswith((".whl", ".tar.gz", ".zip")):
            stem = name.split("-")[0] if name.endswith(".whl") else name.rsplit("-", 1)[0]
            project = re.sub(r"[-_.]+", "-", stem).lower()
            projects.setdefault(project, []).append(name)
    for project, files in projects.items():
        os.makedirs(os.path.join(index, project), exist_ok=True)
        links = "".join(f'<a href="file://{wheels}/{n}">{n}</a>\n' for n in files)
        with open(os.path.join(index, project, "index.html"), "w") as f:
            f.write(f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n")
    open_up(index)


def provision_uv(needs, report):
    if needs["uv_version"]:
        rc, out = run([sys.executable, "-m", "pip", "install", "--no-cache-dir",
                       "uv==" + needs["uv_version"]])  # fmt: skip
        if rc != 0:
            report["unservable"].append({"what": "uv " + needs["uv_version"], "why": why(out)})
    if not (needs["uv_projects"] or needs["uvx"]):
        return
    uv = shutil.which("uv")
    if uv is None:
        report["unservable"].append({"what": "uv", "why": "the image has no uv"})
        return
    env = {"UV_CACHE_DIR": UV_CACHE, "UV_PYTHON_DOWNLOADS": "never"}
    for run_ in needs["uvx"]:
        argv = [uv, "tool", "run"]
        if run_["python"]:
            argv += ["-p", run_["python"]]
        for req in run_["with"]:
            argv += ["--with", req]
        argv += ["--from", run_["from"], run_["tool"], "--version"]
        rc, out = run(argv, cwd=tempfile.gettempdir(), env=env)
        if rc != 0 and re.search(r"^(error|  ×|  \|)", out, re.M):  # uv's, not the tool's
            py = f"-p {run_['python']} " if run_["python"] else ""
            what = f"uvx {py}{run_['from']}"
            report["unservable"].append({"what": what, "why": why(out)})
    for reqs in needs["uv_projects"]:
        d = tempfile.mkdtemp(prefix="agentpost-uv-")
        rc, out = run([uv, "init", "--name", "agentpost-warm", "--no-readme", "-q"], cwd=d, env=env)
        if rc == 0:
            rc, out = run([uv, "add"] + reqs, cwd=d, env=env)
        if rc != 0:
            report["unservable"].append({"what": "uv add " + " ".join(reqs), "why": why(out)})
        shutil.rmtree(d, ignore_errors=True)


def pythons_here():
    """The minor versions of the ``python3.N`` executables on PATH (python3's own among them)."""
    found = {PY3}
    for d in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = os.listdir(d) if d else []
        except OSError:
            continue
        for name in names:
            m = re.fullmatch(r"python(3\.\d+)", name)
            if m and os.access(os.path.join(d, name), os.X_OK):
                found.add(m.group(1))
    return sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")))


def system_name():
    """`` (Debian GNU/Linux 13 (trixie))`` from /etc/os-release, or ``""``."""
    try:
        with open("/etc/os-release") as f:
            m = re.search(r'^PRETTY_NAME="?([^"\n]*)', f.read(), re.M)
    except OSError:
        return ""
    return f" ({m.group(1)})" if m else ""


def provision_pythons(needs, report):
    """Name each interpreter asked for that the image lacks (the first command asking it)."""
    have, said = pythons_here(), set()
    for ask in needs.get("pythons", []):
        version = ask["python"]
        if version in have or version in said:
            continue
        said.add(version)
        report["unservable"].append({
            "what": f"Python {version} ({ask['how']})",
            "why": f"{ask['where']} asks Python {version} ({ask['how']}); the image"
            f"{system_name()} has Python {', '.join(have)} only; uv cannot download interpreters"
            " offline (UV_PYTHON_DOWNLOADS=never)",
        })  # fmt: skip


def provision_npm(needs, report):
    if not needs["npm"]:
        return
    npm = shutil.which("npm")
    if npm is None:
        report["unservable"].append(
            {"what": "npm install", "why": "npm is not in the image when it is built"}
        )
        return
    for _global, specs in needs["npm"]:
        d = tempfile.mkdtemp(prefix="agentpost-npm-")
        base = [npm, "install", "--no-audit", "--no-fund", "--prefix", d, "--cache", NPM_CACHE]
        for spec, reason in each(specs, lambda items, base=base: run(base + items)):
            report["unservable"].append({"what": "npm " + spec, "why": reason})
        shutil.rmtree(d, ignore_errors=True)


def open_up(path):
    """Caches any image user may use (an agent that is not root installs too)."""
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            p = os.path.join(root, name)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | (0o777 if name in dirs else 0o666))
    if os.path.isdir(path):
        os.chmod(path, 0o777)


def main(path):
    with open(path) as f:
        needs = json.load(f)
    report = {"python3": PY3, "served": {}, "unservable": [], "notes": list(needs["notes"])}
    report["substituted"] = []
    provision_apt(needs, report)
    provision_pip(needs, report)
    provision_uv(needs, report)
    provision_npm(needs, report)
    provision_pythons(needs, report)
    for d in (UV_CACHE, NPM_CACHE):
        os.makedirs(d, exist_ok=True)
        open_up(d)
    with open("/etc/pip.conf", "w") as f:  # last: the steps above still use the index
        f.write(f"[global]\nindex-url = file://{PIP_INDEX}\nfind-links = {WHEELS}\nretries = 0\n")
    with open(REPORT, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    for item in report["unservable"]:
        print(f"agentpost: cannot serve {item['what']}: {item['why']}")


if __name__ == "__main__":
    main(sys.argv[1])
