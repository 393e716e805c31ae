"""The persistent executor: one small process inside a sandbox that runs each command for the host.

This file runs *inside* the sandbox, as ``python3 -I -S -B -c <this source> <rlimits>``, by the
sandbox's own system Python (3.8 or newer), as PID 1 of the sandbox's PID namespace (bwrap
``--as-pid-1``; docker: the container's entrypoint). It imports only the standard library; the
host reads it as text (``exec_client.server_source``) and never imports it.

Protocol (``exec_client`` is the other end): frames of ``type (1 byte) | length (4 bytes, big
endian) | payload`` over the server's stdin (host → server) and stdout (server → host).

| host → server | |
|---|---|
| ``R`` marshal ``{argv, cwd, env, user, keep_home, keep, stdin, cap, kill_after}`` | run one command (``env`` is added to the server's own environment) |
| ``I`` bytes / ``E`` | the command's stdin / its end |
| ``K`` | kill the command and everything it started (timeout, output cap, quota) |
| ``S`` | kill every process but the server, then answer ``D`` (``reset_private``) |
| ``P`` | kill every process but the server and the servers a kept command left (a process holding a listening socket, and its descendants); answer ``D`` with their number as ``strays`` |

| server → host | |
|---|---|
| ``Y`` ``>i`` pid | ready |
| ``O`` / ``X`` bytes | the command's stdout / stderr, at most ``cap`` bytes each |
| ``D`` ``>iqq??i?`` rc, bytes seen on stdout and stderr, runaway, killed, strays, stopped | done: ``rc`` as ``Popen.returncode``; ``strays``: processes still alive when the command's first process exited (then killed); ``stopped``: that process was seen stopped by a signal (polled once a second: a stop continued in between may be missed) |

Each command gets a fresh shell's conditions: its own session (process group), the given cwd
and complete environment, fresh pipes, default signal dispositions, the sandbox's rlimits
(set once on the server, inherited). When the command's first process exits (or on ``K``), the
server sends SIGKILL to every other process in the namespace (``kill(-1)``: atomic against forks,
and it spares only PID 1), reads the pipes to their end, reaps every child and removes SysV IPC
objects: nothing the command started outlives the call, as with a per-command bwrap.

Kept processes (``keep``: Harbor's container semantics, ``SandboxSpec.keep_processes``): when the
command's first process exits, what it left running stays (a server started with ``&``); the
pipes those processes still hold are drained and discarded from then on (so a server that logs to
stdout never blocks), and only a timeout or ``K`` kills, then only the command's own session.
``P`` ends all of them but the servers before grading.

Why it is out of the command's reach: PID 1 gets no signal it has no handler for from inside its
namespace (so ``kill -9 1`` and ``kill -9 -1`` leave it alone) and it installs none; it is not
dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so ``/proc/1/fd``, ``/proc/1/mem`` and ptrace are
closed to the command's uid; its protocol pipes are close-on-exec and never reach a command; the
code comes from ``argv`` and the interpreter runs isolated (``-I -S``: no site, no user site, no
``PYTHON*`` variables, no cwd on ``sys.path``) from the read-only system root, so nothing a
command writes can change what the next server start runs.

Layer: io.
"""

import _signal
import _struct
import marshal
import os
import select
import sys

# Only builtin modules: ``json``, ``signal``, ``collections`` and ``ctypes`` would double the
# interpreter's start-up CPU (about 8 ms against 16 ms), paid at every executor start.
HEADER = _struct.Struct(">cI")
DONE = _struct.Struct(">iqq??i?")  # rc, out bytes, err bytes, runaway, killed, strays, stopped
NO_USER = 1 << 20  # rc: the request's user or group is not in the image (the caller's fault)
BASE_ENV = dict(os.environ)  # the sandbox's environment; each request adds its own variables
CHUNK = 1 << 16
# Python ignores these; a command must start with the defaults (SIGXFSZ at the file-size limit,
# SIGPIPE for ``yes | head``).
DEFAULT_SIGNALS = (_signal.SIGPIPE, _signal.SIGXFSZ, _signal.SIGINT, _signal.SIGQUIT)
SIGKILL = 9
LEFTOVER = set()  # read ends of pipes still held by processes a kept command left running


class Channel:
    """Frames over a pair of fds (blocking writes; reads buffered)."""

    def __init__(self, rfd, wfd):
        self.rfd, self.wfd = rfd, wfd
        self.buf = b""
        self.eof = False

    def send(self, kind, payload=b""):
        data = HEADER.pack(kind, len(payload)) + payload
        view = memoryview(data)
        while view:
            view = view[os.write(self.wfd, view) :]

    def fill(self):
        """One read into the buffer (call when readable or to block)."""
        data = os.read(self.rfd, CHUNK)
        if not data:
            self.eof = True
        self.buf += data

    def pop(self):
        """The next complete frame as (kind, payload), or None."""
        if len(self.buf) < HEADER.size:
            return None
        kind, size = HEADER.unpack_from(self.buf)
        end = HEADER.size + size
        if len(self.buf) < end:
            return None
        payload = self.buf[HEADER.size : end]
        self.buf = self.buf[end:]
        return kind, payload

    def next(self):
        """Block until a frame arrives; None at end of stream."""
        while True:
            frame = self.pop()
            if frame is not None or self.eof:
                return frame
            self.fill()


def _setup(rlimits):
    """Move the protocol off fds 0-2, close everything inherited, lock the server down."""
    rfd, wfd, diag = os.dup(0), os.dup(1), os.dup(2)  # os.dup: close-on-exec
    null = os.open("/dev/null", os.O_RDWR)  # close-on-exec too
    for fd in (0, 1, 2):
        os.dup2(null, fd, inheritable=False)
    keep = {0, 1, 2, rfd, wfd, diag, null}
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    sys.stderr = open(diag, "w", closefd=True)
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)  # PID 1 with no handler: no signal reaches
    _not_dumpable()
    import resource

    for item in filter(None, rlimits.split(",")):  # "NPROC=256,AS=2147483648,..."
        name, _, value = item.partition("=")
        limit = getattr(resource, "RLIMIT_" + name)
        resource.setrlimit(limit, (int(value), int(value)))
    return Channel(rfd, wfd), null


def _not_dumpable():
    """prctl(PR_SET_DUMPABLE, 0): /proc/1/fd, /proc/1/mem and ptrace need CAP_SYS_PTRACE now."""
    try:
        import _ctypes

        prctl = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")
        ok = _ctypes.call_function(prctl, (4, 0, 0, 0, 0)) == 0
    except (ImportError, AttributeError, OSError):
        ok = False
    if not ok:  # the public (slower to import) way
        import ctypes

        if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:
            sys.exit("agentpost executor: cannot make itself non-dumpable")


def _which(name, env):
    if "/" in name:
        return name
    for d in env.get("PATH", os.defpath).split(":"):
        path = os.path.join(d or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _spawn(req, fds, err_w):
    """Start the command; its pid, or None after writing why it could not start to stderr."""
    argv, cwd = req["argv"], req["cwd"]
    env = dict(BASE_ENV)
    env.update(req["env"])
    exe = _which(argv[0], env)
    if exe is None:
        os.write(err_w, f"agentpost: failed to execute {argv[0]}: command not found\n".encode())
        return None, 127
    if req.get("user") is not None:
        return _fork_as(req["user"], req.get("keep_home"), exe, argv, env, cwd, fds, err_w)
    try:
        os.chdir(cwd)
    except (OSError, ValueError) as e:  # (ValueError: a NUL byte in the path)
        os.write(
            err_w, f"agentpost: Can't chdir to {cwd!r}: {getattr(e, 'strerror', e)}\n".encode()
        )
        return None, 1
    try:
        actions = [(os.POSIX_SPAWN_DUP2, fd, i) for i, fd in enumerate(fds)]
        pid = os.posix_spawn(
            exe, argv, env, file_actions=actions, setsid=True, setsigdef=DEFAULT_SIGNALS
        )
        return pid, None
    except OSError as e:
        os.write(err_w, f"agentpost: failed to execute {argv[0]}: {e.strerror}\n".encode())
        return None, 127 if e.errno == 2 else 126
    except (ValueError, TypeError, UnicodeError) as e:  # a NUL byte, a lone surrogate, env
        # values of the wrong type: the command's fault (exit 126), never the executor's end
        os.write(err_w, f"agentpost: cannot execute {argv[0]!r}: {e}\n".encode())
        return None, 126
    finally:
        os.chdir("/")


def _fork_as(user, keep_home, exe, argv, env, cwd, fds, err_w):
    """fork + setuid + exec for a command that runs as another image user (docker)."""
    import grp
    import pwd

    name, _, group = str(user).partition(":")
    try:
        pw = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
        uid, gid, home = pw.pw_uid, pw.pw_gid, pw.pw_dir
        groups = os.getgrouplist(pw.pw_name, gid)
    except KeyError:
        if not name.isdigit():
            os.write(err_w, f"unable to find user {name}: no matching entries\n".encode())
            return None, NO_USER
        uid, gid, home, groups = int(name), int(name), "/", []
    if group:
        try:
            gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
        except KeyError:
            os.write(err_w, f"unable to find group {group}: no matching entries\n".encode())
            return None, NO_USER
    env = dict(env)
    if not keep_home:
        env["HOME"] = home
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            for i, fd in enumerate(fds):
                os.dup2(fd, i)
            for sig in DEFAULT_SIGNALS:
                _signal.signal(sig, _signal.SIG_DFL)
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            os.chdir(cwd)
            os.execve(exe, argv, env)
        except OSError as e:
            os.write(2, f"agentpost: cannot run {argv[0]} as {user}: {e.strerror}\n".encode())
        finally:
            os._exit(126)
    return pid, None


def _kill_all():
    try:
        os.kill(-1, SIGKILL)  # every process of the namespace but PID 1 (us)
    except ProcessLookupError:
        pass


def _procs():
    """{pid: (state, ppid, session)} of every process of the namespace but PID 1."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or name == "1":
            continue
        try:
            text = _read_file("/proc/" + name + "/stat").decode("ascii", "replace")
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()  # the name may hold spaces and ")"
        out[int(name)] = (fields[0], int(fields[1]), int(fields[3]))
    return out


def _alive():
    """How many processes (not zombies) run here besides PID 1."""
    return sum(1 for state, _, _ in _procs().values() if state not in ("Z", "X"))


def _kill_session(sid):
    """SIGKILL every process of session ``sid`` (a kept command's own; what it put in other
    sessions stays)."""
    for pid, (_, _, session) in _procs().items():
        if session == sid:
            try:
                os.kill(pid, SIGKILL)
            except ProcessLookupError:
                pass


def _listening_inodes():
    """Socket inodes in a listening state: TCP LISTEN, bound UDP, listening Unix sockets."""
    inodes = set()
    for name, state_col, want in (("tcp", 3, "0A"), ("tcp6", 3, "0A"), ("udp", 3, "07"),
                                  ("udp6", 3, "07"), ("unix", 5, "01")):  # fmt: skip
        try:
            lines = _read_file("/proc/net/" + name).decode("ascii", "replace").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if name == "unix":  # Num RefCount Protocol Flags Type St Inode [Path]
                if len(f) > 6 and int(f[3], 16) & 0x10000 and f[state_col] == want:
                    inodes.add(f[6])
            elif len(f) > 9 and f[state_col] == want:
                inodes.add(f[9])
    return inodes


def _prune():
    """Kill every process but the servers (a process holding a listening socket) and their
    descendants; return how many stay."""
    procs, inodes = _procs(), _listening_inodes()
    keep = set()
    for pid in procs:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in inodes:
                keep.add(pid)
                break
    grew = True
    while grew:  # the servers' children (workers) stay with them
        more = {p for p, (_, ppid, _) in procs.items() if ppid in keep and p not in keep}
        grew = bool(more)
        keep |= more
    for pid, (state, _, _) in procs.items():
        if pid not in keep and state not in ("Z", "X"):
            try:
                os.kill(pid, SIGKILL)
            except ProcessLookupError:
                pass
    _reap_nohang()
    return sum(1 for p in keep if procs[p][0] not in ("Z", "X"))


def _reap_nohang():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return


def _drain_leftover(fd):
    """Read and drop what a kept process wrote; close at its end."""
    try:
        data = os.read(fd, CHUNK)
    except BlockingIOError:
        return
    except OSError:
        data = b""
    if not data:
        LEFTOVER.discard(fd)
        os.close(fd)


def _reap_all():
    """Wait until no child is left (every process here descends from PID 1)."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _read_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        parts = []
        while True:
            data = os.read(fd, 1 << 16)
            if not data:
                return b"".join(parts)
            parts.append(data)
    finally:
        os.close(fd)


def _clear_ipc():
    """Remove SysV shared memory, semaphores and message queues a command left behind (they
    outlive processes; a per-command IPC namespace used to take them away)."""
    for kind, cmd in (("shm", 0), ("sem", 1), ("msg", 2)):
        try:
            lines = _read_file("/proc/sysvipc/" + kind).splitlines()[1:]
            ids = [int(line.split()[1]) for line in lines if line.strip()]
        except (OSError, ValueError, IndexError):
            continue
        if ids:
            import ctypes

            libc = ctypes.CDLL(None)
            for i in ids:  # IPC_RMID = 0
                if cmd == 0:
                    libc.shmctl(i, 0, None)
                elif cmd == 1:
                    libc.semctl(i, 0, 0)
                else:
                    libc.msgctl(i, 0, None)


class Poller:
    """``select.poll`` with a tag per fd (lighter than ``selectors`` for a few fds)."""

    def __init__(self):
        self.poll, self.tags = select.poll(), {}

    def register(self, fd, events, tag):
        self.poll.register(fd, events)
        self.tags[fd] = tag

    def unregister(self, fd):
        self.poll.unregister(fd)
        del self.tags[fd]

    def select(self, timeout_s):
        ready = self.poll.poll(None if timeout_s is None else timeout_s * 1000)
        return [(fd, self.tags[fd]) for fd, _ in ready if fd in self.tags]


class Run:
    """One command: serves its pipes and the host's frames until it and its output are done."""

    def __init__(self, chan, req, null):
        self.chan = chan
        self.cap, self.kill_after = req["cap"], req["kill_after"]
        self.seen = [0, 0]
        self.runaway = self.killed = self.stopped = False
        self.keep = bool(req.get("keep"))  # what the command leaves running stays
        self.strays = 0
        self.pending = []  # stdin chunks not yet written (memoryviews), oldest first
        self.stdin_open = bool(req.get("stdin"))  # more stdin frames may come
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, self.in_w = os.pipe() if self.stdin_open else (null, None)
        self.pid, self.rc = _spawn(req, (in_r, out_w, err_w), err_w)
        self.sid = self.pid  # the command's own session (setsid at the spawn)
        for fd in (out_w, err_w) + ((in_r,) if self.in_w is not None else ()):
            os.close(fd)
        if self.in_w is not None:
            os.set_blocking(self.in_w, False)
        self.streams = {out_r: (0, b"O"), err_r: (1, b"X")}
        self.sel = Poller()
        for fd in self.streams:
            self.sel.register(fd, select.POLLIN, "out")
        self.sel.register(chan.rfd, select.POLLIN, "ctrl")
        for fd in LEFTOVER:
            self.sel.register(fd, select.POLLIN, "left")
        self.pidfd = None
        if self.pid is not None and hasattr(os, "pidfd_open"):
            self.pidfd = os.pidfd_open(self.pid)  # wakes us when the command exits
            self.sel.register(self.pidfd, select.POLLIN, "exit")
        self.writing = False
        self._frames()

    def serve(self):
        while self.streams or self.pid is not None:
            # without a pidfd (Python < 3.9) poll for the exit; with one, reap orphans each second
            timeout = 1.0 if self.pidfd is not None or self.pid is None else 0.005
            for fd, what in self.sel.select(timeout):
                if what == "out":
                    self._read(fd)
                elif what == "ctrl":
                    self._control()
                elif what == "in":
                    self._write_stdin()
                elif what == "left":
                    _drain_leftover(fd)
                    if fd not in LEFTOVER:
                        self.sel.unregister(fd)
            if self.pid is not None:
                self._reap()
            if self.keep and self.pid is None and self.streams:
                self._leave_streams()
            if self.chan.eof:  # the host is gone: end everything and leave
                _kill_all()
                sys.exit(0)
        self._finish()

    def _read(self, fd):
        data = os.read(fd, CHUNK)
        index, kind = self.streams[fd]
        if not data:
            self.sel.unregister(fd)
            os.close(fd)
            del self.streams[fd]
            return
        room = self.cap - min(self.seen[index], self.cap)
        self.seen[index] += len(data)
        if room > 0:
            self.chan.send(kind, data[:room])
        if self.seen[index] > self.kill_after and not self.runaway:
            self.runaway = True  # writing far past the cap: end it rather than drain it
            self._kill()

    def _control(self):
        self.chan.fill()
        self._frames()

    def _frames(self):
        """Act on the host's frames already read (stdin often comes in the request's read)."""
        while True:
            frame = self.chan.pop()
            if frame is None:
                return
            kind, payload = frame
            if kind == b"K":
                self.killed = True
                self._kill()
            elif kind == b"I" and self.in_w is not None:
                if payload:
                    self.pending.append(memoryview(payload))
            elif kind == b"E":
                self.stdin_open = False
            self._stdin_state()

    def _write_stdin(self):
        try:
            n = os.write(self.in_w, self.pending[0])
            if n == len(self.pending[0]):
                del self.pending[0]
            else:
                self.pending[0] = self.pending[0][n:]
        except BlockingIOError:
            return
        except OSError:  # the command stopped reading
            self.pending.clear()
            self.stdin_open = False
        self._stdin_state()

    def _stdin_state(self):
        """Poll the stdin pipe while there is something to write; close it at the end."""
        if self.in_w is None:
            return
        if self.pending and not self.writing:
            self.sel.register(self.in_w, select.POLLOUT, "in")
            self.writing = True
        elif not self.pending and self.writing:
            self.sel.unregister(self.in_w)
            self.writing = False
        if not self.pending and not self.stdin_open:
            os.close(self.in_w)
            self.in_w = None

    def _kill(self):
        """End the command: everything here, or (kept) the command's own session."""
        if self.keep:
            if self.sid is not None:
                _kill_session(self.sid)
        else:
            _kill_all()

    def _leave_streams(self):
        """A kept command has exited: take what its pipes hold now, then leave them to the
        processes it left running (drained and dropped from here on)."""
        for fd in list(self.streams):
            os.set_blocking(fd, False)
            while fd in self.streams:
                try:
                    self._read(fd)
                except BlockingIOError:
                    self.sel.unregister(fd)
                    del self.streams[fd]
                    LEFTOVER.add(fd)

    def _reap(self):
        """Reap exited children (orphans come to PID 1); note the command's own exit, and
        whether it was stopped by a signal on the way."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG | os.WUNTRACED | os.WCONTINUED)
            except ChildProcessError:
                return
            if not pid:
                return
            if pid == self.pid:
                if os.WIFSTOPPED(status) or os.WIFCONTINUED(status):
                    self.stopped = True  # (a stop and continue between two polls may be missed)
                else:
                    self._ended(status)

    def _ended(self, status):
        self.rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        self.pid = None
        if not self.keep:
            self.strays = _alive()
            _kill_all()  # what the command left behind dies with it
        if self.pidfd is not None:
            self.sel.unregister(self.pidfd)
            os.close(self.pidfd)
            self.pidfd = None
        if self.in_w is not None:
            if self.writing:
                self.sel.unregister(self.in_w)
            os.close(self.in_w)
            self.in_w = None

    def _finish(self):
        if self.keep:
            _reap_nohang()
        else:
            _kill_all()
            _reap_all()
            _clear_ipc()
        done = DONE.pack(
            self.rc,
            self.seen[0],
            self.seen[1],
            self.runaway,
            self.killed,
            self.strays,
            self.stopped,
        )
        self.chan.send(b"D", done)


def _next_frame(chan):
    """The host's next frame (None at its end); while waiting, drain what kept processes write
    and reap those that exit."""
    while True:
        frame = chan.pop()
        if frame is not None or chan.eof:
            return frame
        if not LEFTOVER:
            ready = select.select([chan.rfd], [], [], 1.0)[0]
        else:
            ready = select.select([chan.rfd, *LEFTOVER], [], [], 1.0)[0]
        for fd in ready:
            if fd == chan.rfd:
                chan.fill()
            else:
                _drain_leftover(fd)
        _reap_nohang()


def _close_leftovers():
    for fd in list(LEFTOVER):
        LEFTOVER.discard(fd)
        os.close(fd)


def main():
    if os.getpid() != 1:  # kill(-1) anywhere else would signal every process of the user
        sys.exit("agentpost executor: must run as PID 1 of its own PID namespace")
    chan, null = _setup(sys.argv[1] if len(sys.argv) > 1 else "")
    chan.send(b"Y", _struct.pack(">i", os.getpid()))
    while True:
        frame = _next_frame(chan)
        if frame is None:
            return
        kind, payload = frame
        if kind == b"R":
            Run(chan, marshal.loads(payload), null).serve()
        elif kind == b"S":
            _kill_all()
            _reap_all()
            _clear_ipc()
            _close_leftovers()
            chan.send(b"D", DONE.pack(0, 0, 0, False, False, 0, False))
        elif kind == b"P":
            kept = _prune()
            if not kept:
                _reap_all()
                _clear_ipc()
                _close_leftovers()
            chan.send(b"D", DONE.pack(0, 0, 0, False, False, kept, False))


if __name__ == "__main__":
    main()
