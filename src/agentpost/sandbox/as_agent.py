"""``as-agent``: how a task's tests run code the agent wrote, without the verifier's powers.

This file runs *inside* the verifier's namespace (``tasks/verifier.py`` installs it as
``$AGENTPOST_AS_AGENT``, run by the image's own ``python3 -I -S``); it imports only the standard
library and the host never imports it. A test runs ``"$AGENTPOST_AS_AGENT" [--rw DIR]... [--]
CMD ARGS...`` (a ``--rw`` dir, one the test made for the command to change, becomes the agent's);
the command then runs:

- as the agent's uid and gid (``AGENTPOST_AGENT_USER``, ``uid:gid`` or an image user name), with
  no supplementary groups: it cannot write ``/logs/verifier``, ``/tests`` or the harness (owned
  by the verifier's root) nor signal the test process (another uid). Where the agent *is* root
  (a docker task without ``[agent].user``), it stays uid 0 with every capability dropped (the
  bounding set too), so it can no longer override file modes or signal other uids;
- in a Landlock domain (Linux 5.13+; ABI 6, Linux 6.12+, for the scopes): writes only beneath the
  agent's dirs (``AGENTPOST_AGENT_DIRS``), its own scratch dir (HOME and TMPDIR), ``/dev`` and
  the ``--rw`` dirs; reads, runs and lists beneath every top-level dir but ``/tests`` and
  ``/logs`` (so no path, symlink or ``/proc/PID/root`` trick reaches the hidden tests; each
  rule's dir is reached from ``/`` without following a link, since with a writable root the
  verifier's ``/`` is the agent's commit and ``/peek -> /tests`` or ``/app -> /logs`` would
  grant the hidden dir itself); no
  signal or ptrace to a process outside the domain (the test tree), no abstract Unix socket of
  the test tree. ``no_new_privs`` is set, so no setuid binary gives anything back.

What it cannot do: stop a test from trusting what the command prints, or from importing the
agent's code into its own process (then that code runs with the test's powers: run it through
this instead). A kernel without Landlock keeps the uid and capability drop only (said on stderr).

Layer: io.
"""

import ctypes
import os
import pwd
import stat
import sys
import tempfile

SYS_CREATE, SYS_ADD, SYS_RESTRICT = 444, 445, 446  # the same on every architecture
READ = 1 | 4 | 8  # EXECUTE | READ_FILE | READ_DIR
FS_V1 = (1 << 13) - 1  # every access right of ABI 1
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1, 2
HIDDEN = ("tests", "logs")  # top-level dirs the agent's code may not even read
FILE_RIGHTS = 1 | 2 | 4 | TRUNCATE | IOCTL_DEV  # the rights a rule on a file (not a dir) may hold
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24


def _usage():
    sys.stderr.write("usage: as-agent [--rw DIR]... [--] COMMAND [ARGS...]\n")
    sys.exit(2)


def _parse(argv):
    rw, i = [], 0
    while i < len(argv):
        if argv[i] == "--rw" and i + 1 < len(argv):
            rw.append(argv[i + 1])
            i += 2
        elif argv[i] == "--":
            i += 1
            break
        else:
            break
    if i >= len(argv):
        _usage()
    return rw, argv[i:]


def _agent_ids():
    """(uid, gid) of the agent, or None when it is root (then capabilities are dropped)."""
    user = os.environ.get("AGENTPOST_AGENT_USER", "")
    name, _, group = user.partition(":")
    if not name or name in ("0", "root"):
        return None
    if name.isdigit():
        uid = int(name)
        gid = int(group) if group.isdigit() else uid
    else:
        pw = pwd.getpwnam(name)
        uid, gid = pw.pw_uid, pw.pw_gid
        if group:
            import grp

            gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
    return (uid, gid) if uid != 0 else None


def _landlock(libc, write_dirs):
    """Restrict this process and what it runs (see the docstring); returns the ABI or 0."""
    abi = libc.syscall(SYS_CREATE, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        return 0
    fs = FS_V1 | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)
    fs |= IOCTL_DEV if abi >= 5 else 0
    scoped = (SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL) if abi >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(fs, 0, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(SYS_CREATE, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        return 0
    rules = {}
    for name in os.listdir("/"):
        if name not in HIDDEN:
            rules["/" + name] = READ | (IOCTL_DEV if abi >= 5 else 0)
    for d in ["/dev", *write_dirs]:
        rules[d] = fs
    for path, access in rules.items():
        fd = _open_no_links(path)
        if fd is None:
            continue
        try:
            if not os.path.isdir(f"/proc/self/fd/{fd}"):
                access &= FILE_RIGHTS
            rule = _PathBeneath(access, fd)
            if libc.syscall(SYS_ADD, ruleset, 1, ctypes.byref(rule), 0) != 0:
                sys.exit(f"as-agent: landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
        finally:
            os.close(fd)
    if libc.syscall(SYS_RESTRICT, ruleset, 0) != 0:
        sys.exit("as-agent: landlock_restrict_self: " + os.strerror(ctypes.get_errno()))
    os.close(ruleset)
    return abi


def _open_no_links(path):
    """An ``O_PATH`` fd of ``path`` reached from ``/`` without following a link, or None (a
    link or a missing name on the way). With a writable root the verifier's ``/`` is the agent's
    commit: a rule opened through ``/peek -> /tests`` or an ``/app -> /logs`` would grant the
    hidden dir itself (a rule binds the inode the link leads to)."""
    fd = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in [p for p in os.path.normpath(path).split("/") if p]:
            nxt = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nxt
            if stat.S_ISLNK(os.fstat(fd).st_mode):
                os.close(fd)
                return None
    except OSError:
        os.close(fd)
        return None
    return fd


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _drop_caps(libc):
    """uid 0 without capabilities: the bounding set, then the effective/permitted/inheritable."""
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails past the last cap: harmless
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()
    if libc.capset(ctypes.byref(header), ctypes.byref(data)) != 0:
        sys.exit("as-agent: capset: " + os.strerror(ctypes.get_errno()))


def _give(top, ids):
    """Make ``top`` and everything under it the agent's (a ``--rw`` dir the test made)."""
    os.chown(top, *ids, follow_symlinks=False)
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            os.chown(os.path.join(root, name), *ids, follow_symlinks=False)


def main():
    rw, cmd = _parse(sys.argv[1:])
    libc = ctypes.CDLL(None, use_errno=True)
    ids = _agent_ids() if os.geteuid() == 0 else None
    scratch = tempfile.mkdtemp(prefix="agentpost-agent-")
    if ids is not None:
        for d in [scratch, *rw]:
            _give(d, ids)
    dirs = [d for d in os.environ.get("AGENTPOST_AGENT_DIRS", "").split(":") if d]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.exit("as-agent: cannot set no_new_privs")
    abi = _landlock(libc, [*dirs, scratch, *[os.path.abspath(d) for d in rw]])
    if not abi:
        sys.stderr.write("as-agent: no Landlock on this kernel: uid and capability drop only\n")
    if ids is not None:
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])
    elif os.geteuid() == 0:
        _drop_caps(libc)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTPOST_")}
    env.update(HOME=scratch, TMPDIR=scratch)
    try:
        os.execvpe(cmd[0], cmd, env)
    except OSError as e:
        sys.stderr.write(f"as-agent: cannot run {cmd[0]}: {e.strerror}\n")
        sys.exit(127 if e.errno == 2 else 126)


if __name__ == "__main__":
    main()
