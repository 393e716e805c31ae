"""Run one process with a wall-clock deadline and capped output, without deadlocks.

Both pipes (and stdin, when given) are served by one ``selectors`` loop in the calling thread, so
neither stream can fill up and block the child while we wait on the other. Each stream keeps at
most ``cap`` bytes; anything past it is read and dropped (memory stays bounded) and ``truncated``
is set. A command that keeps writing far past the cap (``kill_after`` bytes on one stream) is
killed rather than drained until its timeout: draining ``yes`` for a minute would burn a core on
a shared machine for nothing. Killing is the backend's business (``kill`` callback) because only
it knows how to end the whole process tree. ``watch`` (polled every ``watch_every_s`` seconds)
lets the backend end a command for its own reason (the disk-quota fallback); the reason comes back
in ``ExecResult.killed``, like "timeout" and "output cap".

Layer: io.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable

from agentpost.sandbox.base import ExecResult

_CHUNK = 1 << 16


class _Sink:
    """One output stream: keeps the first ``cap`` bytes, counts the rest."""

    def __init__(self, cap: int):
        self.cap = cap
        self.chunks: list[bytes] = []
        self.kept = 0
        self.seen = 0

    def feed(self, data: bytes) -> None:
        self.seen += len(data)
        room = self.cap - self.kept
        if room > 0:
            part = data[:room]
            self.chunks.append(part)
            self.kept += len(part)

    @property
    def truncated(self) -> bool:
        return self.seen > self.cap

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")


def argv_of(command: str | list[str]) -> list[str]:
    """An exec's command as an argv: a string runs under ``bash -c``."""
    return ["bash", "-c", command] if isinstance(command, str) else list(command)


def runaway_bytes(cap: int) -> int:
    """How much output past ``cap`` a command may write before it is killed as a runaway."""
    return max(8 * cap, 64 << 20)


def exit_code_of(returncode: int) -> int:
    """A shell-style exit code: a child killed by signal N reads as 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def run_capped(
    proc: subprocess.Popen,
    *,
    stdin: bytes | None,
    timeout_s: float,
    cap: int,
    kill_after: int,
    kill: Callable[[subprocess.Popen], None],
    watch: Callable[[], str | None] | None = None,
    watch_every_s: float = 0.25,
) -> ExecResult:
    """Serve ``proc``'s pipes until both close, the deadline passes or output runs away.

    ``proc`` must have been started with ``stdout=PIPE, stderr=PIPE`` and ``stdin=PIPE`` when
    ``stdin`` is given. ``kill(proc)`` must end the process and everything it started.
    """
    start = time.monotonic()
    deadline = start + timeout_s
    sinks = {proc.stdout.fileno(): _Sink(cap), proc.stderr.fileno(): _Sink(cap)}
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    sel = selectors.DefaultSelector()
    for fd in sinks:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    pending = memoryview(stdin) if stdin else None
    if proc.stdin is not None:
        if pending:
            os.set_blocking(proc.stdin.fileno(), False)
            sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
    timed_out = runaway = False
    reason = None
    open_fds = set(sinks)
    next_watch = start + watch_every_s
    while open_fds:
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            timed_out = True
            break
        if watch is not None and now >= next_watch:
            next_watch = now + watch_every_s
            if (reason := watch()) is not None:
                break
            left = min(left, watch_every_s)
        elif watch is not None:
            left = min(left, next_watch - now)
        for key, _ in sel.select(timeout=left):
            fd = key.fd
            if fd in sinks:
                data = _read(fd)
                if data is None:
                    continue
                if data:
                    sinks[fd].feed(data)
                    runaway = runaway or sinks[fd].seen > kill_after
                else:
                    sel.unregister(fd)
                    open_fds.discard(fd)
            else:
                pending = _write(proc, sel, pending)
        if runaway:
            break
    sel.close()
    if not (timed_out or runaway or reason):
        try:  # both pipes closed, but the command may live on without them
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    if timed_out or runaway or reason:
        kill(proc)
    returncode = proc.wait()
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        if stream is not None and not stream.closed:
            stream.close()
    return ExecResult(
        exit_code=None if timed_out else exit_code_of(returncode),
        stdout=sinks[out_fd].text(),
        stderr=sinks[err_fd].text(),
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
        truncated=sinks[out_fd].truncated or sinks[err_fd].truncated,
        killed="timeout" if timed_out else "output cap" if runaway else reason,
    )


def _read(fd: int) -> bytes | None:
    """The next chunk, ``b""`` at end of stream, ``None`` when nothing is ready after all."""
    try:
        return os.read(fd, _CHUNK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _write(proc: subprocess.Popen, sel: selectors.BaseSelector, pending):
    """Write the next piece of stdin; close it when done or when the child stops reading."""
    fd = proc.stdin.fileno()
    try:
        n = os.write(fd, pending[:_CHUNK])
        pending = pending[n:]
    except BlockingIOError:
        return pending
    except (BrokenPipeError, OSError):
        pending = None
    if not pending:
        sel.unregister(fd)
        proc.stdin.close()
        return None
    return pending


def kill_group(proc: subprocess.Popen | None) -> None:
    """SIGKILL the process group ``proc`` leads (it was started with ``start_new_session``);
    nothing when it never started (Ctrl-C while it was being started)."""
    if proc is None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
