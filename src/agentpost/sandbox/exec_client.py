"""The host's end of the persistent executor (``exec_server.py``): start it, run commands on it.

``Server.start(argv)`` starts the backend's command line that ends in the server (a ``bwrap``,
a ``docker run -i``) with pipes for the protocol and waits for the server's ready frame;
``Server.run(...)`` runs one command and returns its ``ExecResult`` with the semantics of
``capture.run_capped`` (wall-clock deadline, output cap, runaway kill, ``watch``), where killing
is a ``K`` frame: the server ends the command and everything it started and still answers, so
a timeout costs no restart. The output cap is applied in the server (it forwards at most ``cap``
bytes per stream and counts the rest), so a runaway ``yes`` never crosses the pipe. If the
server does not answer within ``grace_s`` of a kill, or the caller ends it from another thread
(``Server.kill``, e.g. ``cancel``), the backend's ``hard_kill`` ends the whole sandbox's
processes, ``run`` returns the command as killed (exit 137) and the next command starts a new
server. A stream that ends while nobody here killed it raises ``ServerDied``.

One command at a time per server: the caller serialises (``BwrapSandbox`` and ``DockerSandbox``
hold a lock around ``run``).

Layer: io.
"""

from __future__ import annotations

import marshal
import os
import select
import struct
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentpost.errors import InfraError
from agentpost.sandbox.base import ExecResult
from agentpost.sandbox.capture import exit_code_of

HEADER = struct.Struct(">cI")
DONE = struct.Struct(">iqq??i?")  # as in exec_server.py
NO_USER = 1 << 20  # as in exec_server.py: the answer to a request whose user is not in the image
_CHUNK = 1 << 16
_SOURCE: list[str] = []


def server_source() -> str:
    """The server's code, as passed to ``python3 -c`` (read once, on first use)."""
    if not _SOURCE:
        text = Path(__file__).with_name("exec_server.py").read_text()
        _SOURCE.append(text[text.index('"""', 3) + 3 :].lstrip())  # without the docstring
    return _SOURCE[0]


def server_argv(python: str, rlimits: dict[str, int] | None = None) -> list[str]:
    """The interpreter command line that runs the server, isolated from anything writable;
    ``rlimits`` (``{"NPROC": 256, ...}``) are set on the server and inherited by commands."""
    limits = ",".join(f"{k}={int(v)}" for k, v in (rlimits or {}).items())
    return [python, "-I", "-S", "-B", "-c", server_source(), limits]


class StartFailed(Exception):
    """The server did not come up; ``detail`` is what the command printed on stderr."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class UnknownUser(InfraError):
    """The request named a user or group the image does not have: a setup fault, raised."""


class ServerDied(Exception):
    """The server's stream ended during a command (it, or the sandbox, was killed)."""


@dataclass
class _Done:
    rc: int
    seen: tuple[int, int]
    runaway: bool
    strays: int = 0
    stopped: bool = False


class Server:
    """One running server. ``hard_kill()`` must end it and every process of the sandbox."""

    def __init__(self, hard_kill: Callable[[], None]):
        self._hard_kill = hard_kill
        self.proc: subprocess.Popen | None = None
        self._buf = b""
        self.dead = False
        self.killed_by_us = False
        self._lock = threading.Lock()

    def start(
        self,
        argv: list[str],
        *,
        env: dict,
        timeout_s: float = 60.0,
        started: Callable[[subprocess.Popen], None] | None = None,
        **popen,
    ) -> None:
        """Start ``argv``; ``started(proc)`` runs right after the spawn (bwrap reads its info
        fd there). Raises ``StartFailed`` with the command's stderr if no ready frame comes."""
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
                cwd="/",
                **popen,
            )
        except OSError as e:
            raise StartFailed(f"cannot start {argv[0]}: {e}") from e
        if started is not None:
            started(self.proc)
        os.set_blocking(self.proc.stdout.fileno(), False)
        deadline = time.monotonic() + timeout_s
        frame = self._frame(deadline)
        if frame is None or frame[0] != b"Y":
            late = time.monotonic() >= deadline and self.proc.poll() is None
            self.dead = True
            self._hard_kill()
            err = self._stderr()
            if late:
                said = f": {err}" if err else ""
                err = f"the sandbox's executor did not answer within {timeout_s:.0f} s{said}"
            raise StartFailed(err or "the executor exited before it was ready")

    def _stderr(self) -> str:
        """What the server's command printed on stderr (once it has ended)."""
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return ""
        return self.proc.stderr.read().decode("utf-8", "replace").strip()

    def _frame(self, deadline: float | None) -> tuple[bytes, bytes] | None:
        """The next frame; None at end of stream or (with ``deadline``) when it passes."""
        fd = self.proc.stdout.fileno()
        while True:
            if len(self._buf) >= HEADER.size:
                kind, size = HEADER.unpack_from(self._buf)
                end = HEADER.size + size
                if len(self._buf) >= end:
                    frame = (kind, self._buf[HEADER.size : end])
                    self._buf = self._buf[end:]
                    return frame
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            if not select.select([fd], [], [], left)[0]:
                return None
            data = _read(fd)
            if data == b"":
                return None
            if data:
                self._buf += data

    def alive(self) -> bool:
        """Whether the idle server can take a command: its process runs and its stream has
        not ended (an idle server never writes, so anything readable is the end of it)."""
        if self.dead or self.proc is None or self.proc.poll() is not None:
            return False
        if select.select([self.proc.stdout.fileno()], [], [], 0)[0]:
            self.dead = True
            return False
        return True

    def sweep(self, timeout_s: float = 30.0) -> None:
        """Kill every process in the sandbox but the server (``S``); hard-kill if no answer."""
        self._write_all(HEADER.pack(b"S", 0))
        frame = self._frame(time.monotonic() + timeout_s)
        if frame is None or frame[0] != b"D":
            self.kill()

    def prune(self, timeout_s: float = 30.0) -> int:
        """Kill every process but the servers kept commands left (``P``); how many stay.
        Without an answer the whole sandbox is ended (0 stay)."""
        self._write_all(HEADER.pack(b"P", 0))
        frame = self._frame(time.monotonic() + timeout_s)
        if frame is None or frame[0] != b"D":
            self.kill()
            return 0
        return DONE.unpack(frame[1])[5]

    def _write_all(self, data: bytes) -> None:
        fd = self.proc.stdin.fileno()
        os.set_blocking(fd, True)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view) :]
        except OSError:  # the server is gone; reading its answer will say so
            pass

    def kill(self) -> None:
        """End the server and the sandbox's processes (any thread); ``run`` then returns."""
        with self._lock:
            if not self.dead:
                self.killed_by_us = True
                self.dead = True
                self._hard_kill()

    def close(self) -> None:
        self.kill()
        if self.proc is not None:
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    stream.close()
                except OSError:
                    pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def run(
        self,
        request: dict,
        *,
        stdin: bytes | None,
        timeout_s: float,
        cap: int,
        kill_after: int,
        watch: Callable[[], str | None] | None = None,
        watch_every_s: float = 0.25,
        grace_s: float = 10.0,
    ) -> ExecResult:
        """Run one command (``request``: argv, cwd, env, user). Raises ``ServerDied`` if the
        stream ends before the command's answer and nobody here killed the server."""
        start = time.monotonic()
        deadline = start + timeout_s
        req = {**request, "stdin": bool(stdin), "cap": cap, "kill_after": kill_after}
        body = marshal.dumps(req, 4)  # builtin on both sides; the server imports no json
        parts = [HEADER.pack(b"R", len(body)), body]
        for i in range(0, len(stdin or b""), _CHUNK):
            piece = stdin[i : i + _CHUNK]
            parts += [HEADER.pack(b"I", len(piece)), piece]
        if stdin:
            parts.append(HEADER.pack(b"E", 0))
        out = b"".join(parts)
        kept: list[list[bytes]] = [[], []]
        done, reason, sent_kill = None, None, None
        timed_out = False
        wfd, rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(wfd, False)
        sent = 0
        try:  # most requests fit the pipe: one write, then only reading
            sent = os.write(wfd, out)
        except BlockingIOError:
            pass
        except OSError:  # the server is gone; the read side says so
            sent = len(out)
        view = memoryview(out)
        sel = select.poll()
        sel.register(rfd, select.POLLIN)
        writing = sent < len(out)
        if writing:
            sel.register(wfd, select.POLLOUT)
        next_watch = start + watch_every_s
        try:
            while done is None:
                now = time.monotonic()
                if sent_kill is None:
                    if now >= deadline:
                        timed_out, reason = True, "timeout"
                    elif watch is not None and now >= next_watch:
                        next_watch = now + watch_every_s
                        reason = watch()
                    if reason is not None:
                        out, sent = out[sent:] + HEADER.pack(b"K", 0), 0
                        view = memoryview(out)
                        sent_kill = now
                        if not writing:
                            sel.register(wfd, select.POLLOUT)
                            writing = True
                elif now - sent_kill > grace_s:  # no answer to the kill: end the sandbox
                    self.kill()
                    break
                wait = (deadline if sent_kill is None else sent_kill + grace_s) - now
                if watch is not None and sent_kill is None:
                    wait = min(wait, max(0.0, next_watch - now))
                for fd, _ in sel.poll(max(0.0, wait) * 1000):
                    if fd == wfd:
                        try:
                            sent += os.write(wfd, view[sent : sent + _CHUNK])
                        except BlockingIOError:
                            pass
                        except OSError:  # the server is gone; the read side will say so
                            sent = len(out)
                        if sent == len(out):
                            sel.unregister(wfd)
                            writing = False
                        continue
                    data = _read(rfd)
                    if data == b"":
                        self.dead = True
                        break
                    if data:
                        self._buf += data
                    done = self._drain(kept)
                if self.dead:
                    break
        except BaseException:
            # ``watch`` raised, or an interrupt came mid-frame: the server may still be running
            # this command, so its answer would be taken for the next one's. End it.
            self.kill()
            raise
        finally:
            os.set_blocking(wfd, True)
        if done is not None and sent < len(out):
            # The command ended before it read all its stdin: the rest must still cross (the
            # idle server reads and drops it), or the next request would start mid-frame.
            self._write_all(view[sent:])
        if done is None:
            self.dead = True
            if not self.killed_by_us:
                raise ServerDied("the sandbox executor ended during a command")
            done = _Done(
                rc=-9, seen=(sum(map(len, kept[0])), sum(map(len, kept[1]))), runaway=False
            )
            reason = reason or "cancelled"  # ``kill`` from here (a cancel or a close) ended it
        out_text, err_text = (b"".join(k).decode("utf-8", "replace") for k in kept)
        if done.rc == NO_USER:  # said in the answer, not in the stderr a command controls
            raise UnknownUser(err_text.strip()[-300:])
        runaway = done.runaway and reason is None
        return ExecResult(
            exit_code=None if timed_out else exit_code_of(done.rc),
            stdout=out_text,
            stderr=err_text,
            timed_out=timed_out,
            duration_s=time.monotonic() - start,
            truncated=done.seen[0] > cap or done.seen[1] > cap,
            killed="output cap" if runaway else reason,
            strays=done.strays,
            stopped=done.stopped,
        )

    def _drain(self, kept: list[list[bytes]]) -> _Done | None:
        """Take the complete frames from the buffer; the answer once it is there."""
        buf, pos = self._buf, 0
        done = None
        while len(buf) - pos >= HEADER.size:
            kind, size = HEADER.unpack_from(buf, pos)
            end = pos + HEADER.size + size
            if len(buf) < end:
                break
            payload = buf[pos + HEADER.size : end]
            pos = end
            if kind == b"O":
                kept[0].append(payload)
            elif kind == b"X":
                kept[1].append(payload)
            elif kind == b"D":
                rc, out, err, runaway, _killed, strays, stopped = DONE.unpack(payload)
                done = _Done(rc, (out, err), runaway, strays, stopped)
                break
        self._buf = buf[pos:]
        return done


def _read(fd: int) -> bytes | None:
    try:
        return os.read(fd, 1 << 20)
    except BlockingIOError:
        return None
    except OSError:
        return b""
