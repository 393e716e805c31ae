"""Shared helpers for the sandbox tests: a real bwrap backend and a /proc scan.

Layer: io.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest

from agentpost.sandbox.bwrap import BwrapBackend

_BACKEND = BwrapBackend()


def bwrap_backend() -> BwrapBackend:
    if not _BACKEND.available():
        pytest.skip("bubblewrap cannot start a sandbox here (apt-get install bubblewrap)")
    return _BACKEND


def marker() -> str:
    """A unique sleep duration: `sleep <marker>` names its process in /proc."""
    return f"{700 + uuid.uuid4().int % 200}.{uuid.uuid4().int % 10**6:06d}"


def pids_with(text: str) -> list[int]:
    """Pids of live (non-zombie) processes whose command line contains ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmdline and state != b"Z":
            found.append(int(entry))
    return found


def wait_until(predicate, timeout_s: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# Plants modules where a Python start would pick them up (user site, cwd, /tmp, a json.py
# shadowing the stdlib); any Python that runs one writes /app/pwned.
PLANT = (
    "import os, site\n"
    'code = \'import os; open("/app/pwned", "w").write("x")\\n\'\n'
    "dirs = [site.getusersitepackages(), '/tmp', '/app', '/root', '/']\n"
    "for d in dirs:\n"
    "    for name in ('sitecustomize.py', 'usercustomize.py', 'json.py', 'zz.pth'):\n"
    "        try:\n"
    "            os.makedirs(d, exist_ok=True)\n"
    "            with open(os.path.join(d, name), 'w') as f:\n"
    "                f.write(code if name.endswith('.py') else 'import os; ' + code)\n"
    "        except OSError:\n"
    "            pass\n"
)
