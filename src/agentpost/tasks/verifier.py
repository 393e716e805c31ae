"""Verifier isolation (Harbor's rule): nothing the agent left behind can take part in grading.

``isolate`` runs after the agent's last turn and before the tests arrive:

1. No agent process is alive (sandbox contract rule 2: nothing outlives an exec; a backend with
   long-lived processes kills them in ``reset_private``), so from here on only the verifier runs.
2. ``reset_private`` gives the sandbox a fresh, empty /tmp and HOME: a ``.pth`` file or
   ``usercustomize.py`` in the user site-packages, shell rc files and a planted bytecode cache
   under /tmp are gone.
3. ``/tests`` is emptied and ``/logs/verifier`` is removed and created again by the verifier, so
   the tests are copied in only now, a stale ``reward.txt`` or test report counts for nothing,
   and a symlink planted at ``/logs/verifier`` (or inside it) no longer exists. Permission bits
   the agent set cannot stop the cleanup (the owner may always chmod its files); if the dirs
   still are not empty, the run is graded 0 (the agent's doing), never an infrastructure error.
4. A symbolic link the agent left in its writable dirs that leads into ``/tests`` or ``/logs``
   is removed before the tests arrive: ``ln -s /tests/expected.txt /app/out`` points nowhere
   while the agent runs, and at the expected answer once the tests are copied in.
5. The verifier's environment (``VERIFIER_ENV``) turns off Python's user site-packages and
   bytecode writing; HOME and TMPDIR are the fresh dirs. The agent cannot set the environment of
   a later exec, so ``PYTHONSTARTUP``-style variables cannot reach it.

Known limit, as in Harbor: a test that imports the agent's code runs that code in the verifier's
process, so such code can still write the reward file while the tests run; a task that must be
robust to that grades the agent's outputs, not by importing its code.

Layer: io.
"""

from __future__ import annotations

import shlex

from agentpost.sandbox.base import Sandbox

VERIFIER_ENV = {
    "TEST_DIR": "/tests",
    "LOGS_DIR": "/logs",
    "HOME": "/root",
    "TMPDIR": "/tmp",
    "PYTHONNOUSERSITE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}
CLEAN = (
    "chmod -R u+rwX /tests /logs/verifier 2>/dev/null; "
    "find /tests -mindepth 1 -delete; rm -rf /logs/verifier; mkdir -p /logs/verifier; "
    '[ -z "$(ls -A /tests)" ] && [ -z "$(ls -A /logs/verifier)" ] && [ ! -L /logs/verifier ]'
)


# every symlink under the dirs given (NUL-separated: any file name) whose resolved target is
# in /tests or /logs; ``readlink -m`` resolves it even where the target does not exist yet
UNLINK_INTO_VERIFIER = (
    "find {dirs} -xdev -type l -print0 2>/dev/null | while IFS= read -r -d '' l; do"
    ' case "$(readlink -m -- "$l")" in /tests|/tests/*|/logs|/logs/*) rm -f -- "$l";; esac;'
    " done; true"
)


class Tampered(Exception):
    """The verifier's dirs could not be made clean: the agent's doing, graded 0."""


def isolate(sandbox: Sandbox, dirs: tuple[str, ...] = (), **exec_kw) -> None:
    """Make the sandbox ready for the verifier (see the module docstring); ``dirs`` are the
    agent's writable dirs (rule 4). ``exec_kw`` go to the cleanup execs (the docker backend's
    ``user=``: a task whose agent runs as another user is cleaned up as the verifier's user)."""
    reset = getattr(sandbox, "reset_private", None)
    if reset is not None:
        reset()
    else:  # a backend that predates the contract: clear them from inside
        sandbox.exec(
            "find /tmp /root -mindepth 1 -delete 2>/dev/null; true", timeout_s=60, **exec_kw
        )
    if dirs:
        quoted = " ".join(shlex.quote(d) for d in dirs)
        sandbox.exec(UNLINK_INTO_VERIFIER.format(dirs=quoted), timeout_s=60, **exec_kw)
    res = sandbox.exec(CLEAN, timeout_s=60, **exec_kw)
    if res.timed_out or res.exit_code != 0:
        raise Tampered(f"verifier dirs not clean after cleanup: {res.stderr[-300:]}")
