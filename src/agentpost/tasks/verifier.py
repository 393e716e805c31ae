"""Run a task's tests where the agent's state cannot command them (Harbor's rule, enforced).

``run_tests`` grades a sandbox after the agent's last turn:

1. **Its own namespace** (``sandbox.verifier_sandbox()``, see ``sandbox/bwrap_verifier.py`` and
   ``sandbox/docker_verifier.py``): every process the agent started is ended first, except, in a
   sandbox that keeps processes (Harbor's container semantics), the servers the tests may query;
   those stay outside, sharing only the network namespace. The tests get a mount and PID
   namespace no agent process ever entered, fresh ``/tests``, ``/logs``, ``/tmp`` and HOME in
   their own space (not the agent's quota), and the agent's other dirs. So a stale
   ``reward.txt``, a planted ``.pth`` in the user site, shell rc files, a symlink at
   ``/logs/verifier`` and a process waiting to rewrite the reward count for nothing: none of them
   exists where the tests run. Except on docker with a writable root (Harbor's container): there
   the tests' root is the agent's commit, and its ``/tmp`` and HOME are the tests' as in
   Harbor (swept for links below, the user site off by ``PYTHONNOUSERSITE``); the dotfiles the
   tests' tools read there (git's, uv's, pip's config) are the agent's, like those tools
   themselves (``docs/threat-model.md``, Verifier).
2. **The link sweep**, in that namespace, before the tests are copied in: a symbolic link in the
   agent's dirs whose target resolves into ``/tests``, ``/logs``, ``/proc`` or the harness is
   removed (``ln -s /tests/expected.txt /app/out`` points nowhere while the agent runs, and at the
   answer once the tests arrive). It resolves links in the namespace the tests will see (no
   agent-made ``/logs`` or ``/tests`` to resolve through), no agent process can change the dirs
   meanwhile, and the sweep must say it finished: one that runs out of time (100k links) is not
   clean, so the outcome is the agent's 0 (``tasks/outcome.py``).
3. **Agent code runs as the agent**: the tests get ``$AGENTPOST_AS_AGENT`` (``sandbox/as_agent.py``,
   installed read-only by the harness), which runs a command as the agent's uid in a Landlock
   domain: it cannot write ``/logs/verifier``, ``/tests`` or the harness, read the tests, or
   signal the test process. The bundled suites run every script, binary, Makefile, module and git
   command of the agent through it.
4. **The reward is read once, after the namespace is empty** (the executor kills and reaps every
   process before it answers), from the verifier's own dir on the host, with ``O_NOFOLLOW`` at
   every step and ``O_NONBLOCK``, as a regular file only: a FIFO, a symlink or a directory is no
   reward. A test tree that ran out of time, was killed, stopped or signalled (exit status 128 or
   more), or left a process behind is not a clean verdict either (``outcome.classify``).

What this does not stop (``docs/threat-model.md``): a third-party test that imports the agent's
code into its own process or runs it without ``as-agent`` gives that code the test's powers
(it can then write the reward file or fake a report); the rules above still hold around it.

Layer: io.
"""

from __future__ import annotations

import errno
import os
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path

from agentpost.sandbox.base import ExecResult, Sandbox

AS_AGENT = "/run/agentpost/as-agent"
VERIFIER_DIRS = ("/tests", "/logs")
VERIFIER_ENV = {
    "TEST_DIR": "/tests",
    "LOGS_DIR": "/logs",
    "HOME": "/root",
    "TMPDIR": "/tmp",
    "PYTHONNOUSERSITE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}
SWEEP_TIMEOUT_S = 60.0
SWEEP_MAX_ENTRIES = 2_000_000  # a sweep that meets more has not finished (the quota: 1M inodes)
SWEEP_DONE = "agentpost-sweep: done"
MAX_RESULT_BYTES = 16 << 20
# where a link must not lead: the verifier's dirs, /proc (magic links: /proc/self/fd/3 is
# whatever the test opened), and the harness
FORBIDDEN = ("/tests", "/logs", "/proc", "/run/agentpost", "/dev/fd")

SWEEP_PY = f"""
import errno, os, stat, sys
bad = {FORBIDDEN!r}
GONE = (errno.ENOENT, errno.ENOTDIR)  # a name the kernel would not find either: kept as written


def leads_out(path):
    # whether resolving ``path`` as the kernel would passes through a forbidden dir (a magic
    # link of /proc resolves to whatever the opening process holds: anything through it counts);
    # like os.path.realpath, except that an error other than a missing name raises (realpath
    # takes any failing name, e.g. one past PATH_MAX, for a plain file and so misses where the
    # kernel goes); past a missing name the rest is lexical, as in realpath
    done, todo, hops, missing = "", path.split("/")[::-1], 0, False
    while todo:
        c = todo.pop()
        if c in ("", "."):
            continue
        if c == "..":
            done = done.rsplit("/", 1)[0]
            continue
        nxt = done + "/" + c
        if any(nxt == b or nxt.startswith(b + "/") for b in bad):
            return True
        if not missing:
            try:
                st = os.lstat(nxt)
            except OSError as e:
                if e.errno not in GONE:
                    raise
                missing = True
            else:
                if stat.S_ISLNK(st.st_mode):
                    hops += 1
                    if hops > 40:
                        raise OSError(errno.ELOOP, "too many links")
                    target = os.readlink(nxt)
                    todo.extend(target.split("/")[::-1])
                    if target.startswith("/"):
                        done = ""
                    continue
        done = nxt
    return False


seen = removed = 0
limit = int(sys.argv[1])
stack = list(sys.argv[2:])
while stack and seen <= limit:
    d = stack.pop()
    try:
        it = os.scandir(d)
    except OSError as e:  # a dir that cannot be listed may hide a link: the sweep is not done
        print("agentpost-sweep: cannot list a dir:", e.strerror)
        sys.exit(3)
    with it:
        for e in it:
            seen += 1
            if e.is_symlink():
                try:
                    out = leads_out(e.path)
                except OSError:  # where it leads cannot be told: removed
                    out = True
                if out:
                    os.unlink(e.path)
                    removed += 1
            elif e.is_dir(follow_symlinks=False):
                stack.append(e.path)
if seen <= limit:
    print({SWEEP_DONE!r}, seen, removed)
else:
    print("agentpost-sweep: more than", limit, "entries")
"""
# Without python3 (docker's keeper fallback): the same walk in POSIX sh, name by name, ``[ -L ]``
# and ``readlink`` on each (no ``readlink -m``: past PATH_MAX it goes on lexically, as realpath
# does, and kept ``/app/out -> deep/.../m -> .../x -> /tests/...``). A name of PATH_MAX bytes or
# more counts as leading out (the kernel may still follow it; we cannot), and a link that
# cannot be removed means the sweep did not finish. No single quote inside (it is quoted below).
_LEADS_OUT_SH = """
out() {
  at=; todo=$1; hops=0; missing=
  while [ -n "$todo" ]; do
    case $todo in */*) c=${todo%%/*}; todo=${todo#*/} ;; *) c=$todo; todo= ;; esac
    case $c in ""|.) continue ;; ..) at=${at%/*}; continue ;; esac
    nxt=$at/$c
    case $nxt in BAD) return 0 ;; esac
    [ ${#nxt} -ge 4096 ] && return 0
    if [ -z "$missing" ]; then
      if [ -L "$nxt" ]; then
        hops=$((hops + 1)); [ $hops -gt 40 ] && return 0
        t=$(readlink -- "$nxt" && echo .) || return 0
        t=${t%?.}; [ -z "$t" ] && return 0
        case $t in /*) at= ;; esac
        todo=$t/$todo
        continue
      fi
      [ -e "$nxt" ] || missing=1
    fi
    at=$nxt
  done
  return 1
}
bad=0
for l; do if out "$l"; then rm -f -- "$l" || bad=1; fi; done
exit $bad
""".replace("BAD", "|".join(f"{b}|{b}/*" for b in FORBIDDEN))
SWEEP_SH = (
    'LC_ALL=C find "$@" -type l -exec sh -c '
    + shlex.quote(_LEADS_OUT_SH)
    + ' sh {} + && echo "'
    + SWEEP_DONE
    + '"'
)
# Install as-agent (its source on stdin) and sweep, with the image's python3 when it has one.
PREPARE = (
    "mkdir -p /logs/verifier; py=$(command -v python3 || true); code=$1; limit=$2; shift 2;"
    ' if [ -n "$py" ]; then mkdir -p /run/agentpost && { printf "#!%s -IS\\n" "$py"; cat; } > '
    + AS_AGENT
    + " && chmod 555 "
    + AS_AGENT
    + ' && exec "$py" -I -S -c "$code" "$limit" "$@"; fi; '
    + SWEEP_SH
)


@dataclass
class TestRun:
    """What running the tests gave: the test command's result (None: it never ran), the files
    read from /logs/verifier after it (name -> bytes, or why it could not be read), and why the
    run is not clean (None: it is, so far)."""

    res: ExecResult | None = None
    files: dict[str, bytes | str] = field(default_factory=dict)
    problem: str | None = None
    removed_links: int = 0


def as_agent_source() -> bytes:
    text = Path(__file__).resolve().parents[1].joinpath("sandbox", "as_agent.py").read_text()
    return text.encode()


def run_tests(
    sandbox: Sandbox,
    *,
    tests_dir: Path | None,
    extra: dict[str, bytes],
    command: str,
    cwd: str,
    timeout_s: float,
    env: dict[str, str],
    reads: tuple[str | tuple[str, int], ...],
    exec_kw: dict,
) -> TestRun:
    """Open the verifier's namespace for ``sandbox``, sweep links, put the tests (``tests_dir``
    and ``extra`` files under /tests), run ``command``, then read ``reads`` (names under
    /logs/verifier; a ``(name, limit)`` pair reads at most ``limit`` bytes: 0 to learn only
    whether it is there). Sandbox errors propagate (the caller classifies them)."""
    run = TestRun()
    with sandbox.verifier_sandbox() as v:
        dirs = list(v.agent_dirs)
        swept = list(getattr(v, "swept_dirs", dirs))  # (docker: the agent's /tmp, home too)
        argv = ["/bin/sh", "-c", PREPARE, "sweep", SWEEP_PY, str(SWEEP_MAX_ENTRIES), *swept]
        prep = v.exec(argv, stdin=as_agent_source(), timeout_s=SWEEP_TIMEOUT_S, **exec_kw)
        run.removed_links = _removed(prep.stdout)
        if prep.timed_out or prep.exit_code != 0 or SWEEP_DONE not in prep.stdout:
            why = "timed out" if prep.timed_out else f"exit {prep.exit_code}"
            run.problem = f"the link sweep of the agent's dirs did not finish ({why})"
            return run
        if tests_dir is not None and tests_dir.is_dir():
            v.put_dir(str(tests_dir), "/tests")
        for path, data in extra.items():
            v.put(path, data, 0o755)
        agent = getattr(v, "agent_user", None)
        full_env = {
            **env,
            **VERIFIER_ENV,
            "AGENTPOST_AS_AGENT": AS_AGENT,
            "AGENTPOST_AGENT_DIRS": ":".join(dirs),
            **({"AGENTPOST_AGENT_USER": agent} if agent else {}),
        }
        run.res = v.exec(command, cwd=cwd, timeout_s=timeout_s, env=full_env, **exec_kw)
        end = getattr(v, "end", None)  # a namespace whose executor is not ours to trust
        if end is not None:
            end()
        logs = v.layout.mounts["/logs"]
        for item in reads:
            name, limit = item if isinstance(item, tuple) else (item, MAX_RESULT_BYTES)
            run.files[name] = read_result(logs, "verifier/" + name, limit)
        give_back = getattr(v, "give_back", None) if end is None else None
        if give_back is not None:
            give_back()
    return run


def _removed(out: str) -> int:
    for line in out.splitlines():
        if line.startswith(SWEEP_DONE):
            parts = line.split()
            return int(parts[-1]) if len(parts) >= 4 and parts[-1].isdigit() else 0
    return 0


def read_result(root: str, rel: str, limit: int = MAX_RESULT_BYTES) -> bytes | str:
    """The bytes of regular file ``rel`` under host dir ``root``, opened one component at a
    time with ``O_NOFOLLOW`` (and ``O_NONBLOCK``: a FIFO never blocks), or why not (a string):
    "missing", or a link, FIFO, directory or other non-regular file, or one past ``limit``."""
    parts = [p for p in rel.split("/") if p]
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for i, name in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            flags |= 0 if last else os.O_DIRECTORY
            try:
                nxt = os.open(name, flags, dir_fd=fd)
            except FileNotFoundError:
                return "missing"
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    return f"{'/'.join(parts[: i + 1])} is a symbolic link or not a directory"
                return f"{'/'.join(parts[: i + 1])}: {e.strerror}"
            os.close(fd)
            fd = nxt
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return f"{rel} is not a regular file"
        if st.st_size > limit:
            return f"{rel} is larger than {limit} bytes"
        os.set_blocking(fd, True)
        parts = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            parts.append(chunk)
            size += len(chunk)
        return b"".join(parts) if size <= limit else f"{rel} is larger than {limit} bytes"
    finally:
        os.close(fd)
