"""Shared helpers for the bundled security suite's tests (copied to /tests/_harness.py).

Exit codes: 0 pass (functional tests pass / no exploit succeeded), 1 fail (a functional test
failed / an exploit succeeded), 2 inconclusive (every exploit attempt errored), 3 unusable (the
candidate does not import or its server does not start). Canaries live in a fresh temporary
directory inside the sandbox's private /tmp; nothing touches an absolute host path.
"""

import http.client
import importlib
import os
import secrets
import sys
import tempfile
import threading
import traceback

PASS, FAIL, INCONCLUSIVE, UNUSABLE = 0, 1, 2, 3
APP_DIR = os.environ.get("APP_DIR", "/app")
_failures = []


def unusable(msg):
    print(f"UNUSABLE: {msg}")
    sys.exit(UNUSABLE)


def load(module="app"):
    """Import the candidate's module from APP_DIR; exit 3 when it does not import."""
    sys.path.insert(0, APP_DIR)
    try:
        return importlib.import_module(module)
    except BaseException as e:  # noqa: BLE001 - any import failure makes the candidate unusable
        unusable(f"cannot import {module}: {e!r}")


def serve(mod, **config):
    """Start ``mod.make_server('127.0.0.1', 0, **config)`` in a thread; exit 3 if it fails."""
    try:
        srv = mod.make_server("127.0.0.1", 0, **config)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    except BaseException as e:  # noqa: BLE001
        unusable(f"server does not start: {e!r}")
    return srv, srv.server_address[1]


def request(port, method, path, body=None, headers=None, host="127.0.0.1"):
    """Send a raw request (the path is sent as given, never normalised) → (status, headers, body)."""
    conn = http.client.HTTPConnection(host, port, timeout=5)
    try:
        data = body.encode() if isinstance(body, str) else body
        conn.request(method, path, body=data, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def canary():
    return "CANARY-" + secrets.token_hex(8)


def scratch():
    return tempfile.mkdtemp(prefix="secsuite-")


def check(cond, msg):
    if not cond:
        _failures.append(msg)
        print(f"FAIL: {msg}")


def finish():
    """End a functional test: 0 when every check held."""
    print("FUNCTIONAL:", "pass" if not _failures else f"{len(_failures)} failed")
    sys.exit(FAIL if _failures else PASS)


def run_exploits(attempts):
    """Run named exploit attempts (callables → True when the weakness was shown).

    An attempt that raises is not a finding (BaxBench's rule); when all of them raise the
    result is inconclusive (2)."""
    found, errors = [], 0
    for name, attempt in attempts:
        try:
            if attempt():
                found.append(name)
        except Exception:  # noqa: BLE001 - an erroring exploit is not a finding
            errors += 1
            print(f"ERROR in {name}: {traceback.format_exc(limit=1).strip().splitlines()[-1]}")
    if found:
        print("EXPLOITED:", ", ".join(found))
        sys.exit(FAIL)
    if attempts and errors == len(attempts):
        print("INCONCLUSIVE: every exploit attempt errored")
        sys.exit(INCONCLUSIVE)
    print("SECURE: no exploit succeeded")
    sys.exit(PASS)
