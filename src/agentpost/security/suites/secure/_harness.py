"""Shared helpers for the bundled security suite's tests (copied beside each test run).

The candidate never runs in the test's process. ``load`` starts it in a child process that
imports the module from APP_DIR, and returns a proxy: each attribute call travels as one JSON
line over the child's stdin and the reply over its stdout (the child's own prints go to stderr).
``serve`` asks the child to start ``make_server('127.0.0.1', 0, **config)`` on loopback. So a
candidate cannot monkeypatch the harness, rewrite a check, exit 0 at import (``os._exit(0)``)
or raise SystemExit through a call: the canaries, the verdict and the exit code stay in this
process, which is also made non-dumpable so the child cannot ptrace it. Values cross as JSON
(bytes tagged), never pickle, so the child cannot run code here. An exception from the
candidate is re-raised here as the nearest builtin ``Exception`` subclass in its MRO (a
subclass of ValueError arrives as ValueError), else as CandidateError.

Exit codes: 0 pass (functional tests pass / no exploit succeeded), 1 fail (a functional test
failed / an exploit succeeded), 2 inconclusive (every exploit attempt errored), 3 unusable (the
candidate does not import or its server does not start). Canaries live in a fresh temporary
directory inside the sandbox's private /tmp; nothing touches an absolute host path.
"""

import atexit
import base64
import builtins
import ctypes
import http.client
import importlib
import json
import os
import secrets
import select
import subprocess
import sys
import tempfile
import threading
import traceback

PASS, FAIL, INCONCLUSIVE, UNUSABLE = 0, 1, 2, 3
APP_DIR = os.environ.get("APP_DIR", "/app")
CALL_TIMEOUT_S, START_TIMEOUT_S, MAX_REPLY = 10.0, 20.0, 16 << 20
_BYTES = "\x00bytes"
_HERE = os.path.dirname(os.path.abspath(__file__))
_failures = []


class CandidateError(Exception):
    """The candidate raised a non-builtin exception, died, hung or answered garbage."""


def _enc(v):
    if isinstance(v, (bytes, bytearray)):
        return {_BYTES: base64.b64encode(bytes(v)).decode()}
    if isinstance(v, dict):
        return {str(k): _enc(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_enc(x) for x in v]
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    raise TypeError(f"cannot send a {type(v).__name__} across the process boundary")


def _dec(v):
    if isinstance(v, dict):
        if list(v) == [_BYTES]:
            return base64.b64decode(v[_BYTES])
        return {k: _dec(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_dec(x) for x in v]
    return v


def _child_main():
    """The child: import the candidate, then answer one JSON request line at a time."""
    out = os.fdopen(os.dup(1), "w")
    inp = os.fdopen(os.dup(0), "r")
    os.dup2(2, 1)  # the candidate's prints must not corrupt the protocol
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)

    def send(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    sys.path.insert(0, APP_DIR)
    try:
        mod = importlib.import_module(sys.argv[1])
    except BaseException as e:  # noqa: BLE001 - any import failure makes the candidate unusable
        return send({"unusable": f"cannot import {sys.argv[1]}: {e!r}"})
    send({"ready": True})
    for line in inp:
        req = json.loads(line)
        try:
            if req["op"] == "serve":
                srv = mod.make_server("127.0.0.1", 0, **_dec(req["kwargs"]))
                threading.Thread(target=srv.serve_forever, daemon=True).start()
                result = srv.server_address[1]
            else:
                result = getattr(mod, req["name"])(*_dec(req["args"]), **_dec(req["kwargs"]))
            reply = {"ok": _enc(result)}
        except BaseException as e:  # noqa: BLE001 - reported to the parent, never fatal here
            names = [c.__name__ for c in type(e).__mro__]
            reply = {"exc": names, "msg": str(e)[:2000]}
        send(reply)


def _raise_remote(names, msg):
    for name in names:
        cls = getattr(builtins, name, None)
        if isinstance(cls, type) and issubclass(cls, Exception) and cls is not Exception:
            raise cls(msg)
    raise CandidateError(f"{names[0]}: {msg}")


class Candidate:
    """The candidate module, running in a child process (see the module docstring)."""

    def __init__(self, module):
        self._module, self._proc, self._buf, self._served = module, None, b"", False
        self._start()

    def _start(self):
        boot = f"import sys; sys.path.insert(0, {_HERE!r}); import _harness; _harness._child_main()"
        self._proc = subprocess.Popen(
            [sys.executable, "-c", boot, self._module],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
        )  # fmt: skip
        self._buf = b""
        hello = self._read(START_TIMEOUT_S)
        if hello is None or "unusable" in hello:
            reason = hello["unusable"] if hello else "no answer from the candidate process"
            unusable(reason)

    def _read(self, timeout):
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buf:
            ready, _, _ = select.select([fd], [], [], timeout)
            chunk = os.read(fd, 1 << 16) if ready else b""
            if not chunk or len(self._buf) > MAX_REPLY:
                self._stop()
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            self._stop()
            return None

    def _stop(self):
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def _request(self, req, timeout=CALL_TIMEOUT_S):
        if self._proc.poll() is not None:
            if self._served:
                raise CandidateError("the candidate's server process has exited")
            self._start()  # a library call killed the child: start a fresh one
        try:
            self._proc.stdin.write((json.dumps(req) + "\n").encode())
        except OSError as e:
            raise CandidateError(f"candidate process gone: {e}") from None
        reply = self._read(timeout)
        if reply is None:
            raise CandidateError("the candidate process died, hung or answered garbage")
        if "exc" in reply:
            _raise_remote(reply["exc"], reply.get("msg", ""))
        return _dec(reply.get("ok"))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._request(
            {"op": "call", "name": name, "args": _enc(args), "kwargs": _enc(kwargs)}
        )


def unusable(msg):
    print(f"UNUSABLE: {msg}")
    sys.exit(UNUSABLE)


def load(module="app"):
    """Start the candidate's module from APP_DIR in a child process; exit 3 when it does not
    import. This process turns non-dumpable first, so the child cannot ptrace it."""
    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    except (OSError, AttributeError):
        pass
    cand = Candidate(module)
    atexit.register(cand._stop)
    return cand


def serve(cand, **config):
    """Start ``make_server('127.0.0.1', 0, **config)`` in the candidate's process (a thread
    runs ``serve_forever``) → (candidate, port); exit 3 if it fails."""
    try:
        port = cand._request({"op": "serve", "kwargs": _enc(config)}, START_TIMEOUT_S)
    except Exception as e:  # noqa: BLE001
        unusable(f"server does not start: {e!r}")
    cand._served = True
    if not isinstance(port, int):
        unusable(f"server does not start: bad port {port!r}")
    return cand, port


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
