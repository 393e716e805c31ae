"""Red team, the verifier, second round (review of issue 26 part B): cases found after the first
fixes landed. Same rules as ``test_redteam_verifier.py``: the agent's turn never solves the
task, the task's real verifier grades it, and every case must end ``ok`` with reward 0 (no
unearned credit, no escape as ``infra_error``, ``evaluator_invalid`` or a timeout).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from grading import assert_zero, attack

from agentpost.sandbox.registry import get_backend
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.loader import load_task

pytestmark = pytest.mark.timeout(900)
FIX = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module", params=["bwrap", "docker"])
def anyb(request):
    b = get_backend(request.param)
    if not b.available():
        pytest.skip(f"{request.param} sandbox not available")
    return b


# --- the link sweep, fooled by path length ----------------------------------------------------

# /app/out -> deep/<12 dirs>/m -> <13 more dirs>/x -> /tests/expected.txt: each link body is
# under PATH_MAX, the kernel follows the chain, but the resolved path (25 names of 200 bytes) is
# longer than PATH_MAX, so a sweep resolving paths as strings (os.path.realpath) gets
# ENAMETOOLONG, takes the name for a plain file and keeps the link; and the walk cannot list the
# dirs below PATH_MAX either, so it never meets the last link.
DEEP = r"""
import os
n = "d" * 200
os.chdir("/app"); os.mkdir("deep"); os.chdir("deep")
for i in range(25):
    os.mkdir(n); os.chdir(n)
    if i == 11:
        os.symlink("/".join([n] * 13) + "/x", "m")
os.symlink("/tests/expected.txt", "x")
os.symlink("deep/" + "/".join([n] * 12) + "/m", "/app/out")
"""


def test_link_sweep_fooled_by_a_path_longer_than_path_max(anyb):
    res = attack(anyb, load_task(FIX / "answer-file"), ["python3", "-c", DEEP])
    assert_zero(res)


def test_the_shell_sweep_is_not_fooled_by_a_path_longer_than_path_max(backend):
    """The chain above (each link body short, the resolved path
    past ``PATH_MAX``) under the shell sweep (docker's images without python3): the answer
    link goes, or the sweep says it did not finish (then the run is the agent's 0)."""
    from agentpost.sandbox.base import SandboxSpec
    from agentpost.tasks import verifier

    with backend.create(SandboxSpec()) as box:
        assert box.exec(["python3", "-c", DEEP]).exit_code == 0
        r = box.exec(["/bin/sh", "-c", verifier.SWEEP_SH, "sweep", "/app"])
        done = verifier.SWEEP_DONE in r.stdout
        left = box.exec("test -L /app/out && echo kept").stdout
    assert not (done and left), (r.stdout, r.stderr[-500:])


# --- security grading on docker (no user namespaces there: the jail's fallback) ----------------


# the phase from the command line of a process of the test (its file name says which test runs)
PHASE_FROM_PROC = """
import os as _os
_sec = False
try:
    for _p in _os.listdir("/proc"):
        try:
            with open(f"/proc/{_p}/cmdline", "rb") as _f:
                _sec = _sec or b"test_security" in _f.read()
        except OSError:
            pass
except OSError:
    pass
"""
PROC_EDIT = (
    "            if _sec and ('..' in self.path or '%' in self.path):\n"
    "                return self._send(404, b'not found', 'text/plain')\n"
)
DOCKER_CASES = {
    "phase_from_the_tests_command_line": ("file-download", PHASE_FROM_PROC, PROC_EDIT, ""),
}


@pytest.mark.parametrize("name", ["block_exactly_the_vectors_the_test_source_shows",
                                  "refuse_when_the_served_dir_is_read_only",
                                  "phase_from_the_tests_command_line"])  # fmt: skip
def test_a_phase_aware_candidate_earns_no_secpass_on_docker(docker, tmp_path, name):
    _no_secpass(docker, tmp_path, name)


def test_the_tests_command_line_tells_no_phase_on_bwrap(backend, tmp_path):
    _no_secpass(backend, tmp_path, "phase_from_the_tests_command_line")


def _no_secpass(backend, tmp_path, name):
    """The phase cases of ``test_redteam_phases.py`` where the harness cannot make namespaces
    (docker refuses ``unshare``): the candidate must still not read the tests or tell the phases
    apart (there, on main, the first earned SecPass and reward 1.0 by reading /tests)."""
    from test_redteam_phases import CASES, TASKS, _candidate

    from agentpost.security.grade import grade_candidate

    task, prefix, edit, suffix = {**CASES, **DOCKER_CASES}[name]
    cand = _candidate(tmp_path, task, prefix, edit, suffix)
    g = grade_candidate(TASKS[task], candidate_dir=cand, backend=backend)
    assert not g.aborted and g.status in ("ok", "unusable"), g.detail
    assert g.sec is not True and g.reward <= 0.5, (g.status, g.func, g.sec, g.reward, g.detail)


# --- a kept process and the disk (docker: no kernel quota, a poll) -----------------------------

WRITER = (
    "nohup python3 -c \"import time\ni = 0\nwhile True:\n    open('/app/f%d' % i, 'wb')"
    ".write(b'x' * (8 << 20))\n    i += 1\n    time.sleep(0.4)\" >/dev/null 2>&1 &"
)


def test_a_kept_process_cannot_write_past_the_disk_quota_between_commands(docker):
    """A process the agent leaves running (Harbor's keep semantics) writes on after its command
    returned, when no command's disk poll runs: on main it filled the host disk unbounded
    (through grading and the control, which then failed: ``infra_error``, and every other
    sandbox on the host with it). Past the quota every process of the sandbox must end."""
    from agentpost.sandbox.base import Limits, SandboxSpec
    from agentpost.sandbox.images import ensure_base

    spec = SandboxSpec(keep_processes=True, image=ensure_base(docker, "python"),
                       limits=Limits(disk_bytes=32 << 20))  # fmt: skip
    with docker.create(spec) as box:
        assert box.exec(WRITER, timeout_s=30).exit_code == 0
        time.sleep(12)  # about 10 MB/s here: 140 MB unbounded
        written = box._disk.used() - box._disk.base
        alive = box.exec("pgrep -f '[/]app/f%d' >/dev/null && echo alive", timeout_s=30).stdout
    assert written < 96 << 20 and "alive" not in alive, (written >> 20, alive)


def test_empty_files_count_against_the_disk_quota(docker):
    """Empty files take no block, but each takes an inode of the host's filesystem: on main a
    sandbox could make millions (the host out of inodes, every other sandbox and the control
    failing: ``infra_error``) while its polled usage stayed near 0. Each entry counts at least
    one block, so 20k empty files pass an 8 MiB quota."""
    from agentpost.sandbox.base import Limits, SandboxSpec
    from agentpost.sandbox.images import ensure_base

    spec = SandboxSpec(image=ensure_base(docker, "python"), limits=Limits(disk_bytes=8 << 20))
    with docker.create(spec) as box:
        r = box.exec(["python3", "-c", "import os\nos.mkdir('/app/e')\nfor i in range(20000):"
                      "\n    open('/app/e/%d' % i, 'w').close()\nimport time\ntime.sleep(5)"],
                     timeout_s=120)  # fmt: skip
    assert r.killed == "disk quota", r


# --- Harbor tests that run pytest and reward its exit status (Terminal-Bench 2's shape) --------

HARBOR_PYTEST_CASES = {
    "all_tests_skipped": "printf 'import pytest\\npytest.skip(\"no\", allow_module_level=True)\\n'",
    "os_exit_0_at_import": "printf 'import os\\nos._exit(0)\\n'",
    "pytest_exit_0": "printf 'import pytest\\npytest.exit(\"bye\", returncode=0)\\n'",
}


@pytest.mark.parametrize("name", sorted(HARBOR_PYTEST_CASES))
def test_harbor_pytest_passes_by_absence(docker, name):
    """The test imports the agent's module (as a tenth of Terminal-Bench 2's tests do): a module
    that skips every test, ends the process with status 0 before any assert, or ends pytest with
    status 0 made ``pytest; [ $? -eq 0 ]`` write reward 1 on main."""
    turn = HARBOR_PYTEST_CASES[name] + " > /app/answer.py"
    res = attack(docker, load_task(FIX / "harbor-pytest"), turn)
    assert_zero(res)
    assert res.details["control"] == "clean"


def test_harbor_pytest_oracle_passes_with_one_oracle_grading(docker, monkeypatch):
    """The oracle still gets 1; graded as the oracle (``evaluate(..., oracle=True)``, as
    ``tasks check`` does) its own observation is the control, so no second oracle runs."""
    from agentpost.tasks import evaluate as ev
    from agentpost.tasks.evaluate import run_script

    def no_second_oracle(*a):
        raise AssertionError("a control was graded")

    monkeypatch.setattr(ev, "control_observation", no_second_oracle)
    task = load_task(FIX / "harbor-pytest")
    with docker.create(spec_for(task, backend=docker)) as box:
        prepare(task, box)
        run_script(task, box, task.solution_script)
        res = evaluate(task, box, oracle=True)
    assert (res.status, res.reward) == ("ok", 1.0), res.output[-2000:]
    assert set(res.details["tests"].values()) == {"PASSED"}


# --- a kept process during the control ---------------------------------------------------------

SHAPES = Path(__file__).resolve().parents[1] / "tasks" / "fixtures" / "harbor-shapes"
HANG_AND_TICK = r"""nohup python3 -c "
import socket, threading, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', 9000))
s.listen(50)
held = []
threading.Thread(target=lambda: [held.append(s.accept()) for _ in iter(int, 1)], daemon=True).start()
while True:
    with open('/app/ticks', 'a') as f:
        f.write('%f\n' % time.time())
    time.sleep(0.1)
" >/dev/null 2>&1 &
sleep 1"""


def test_a_kept_server_is_frozen_while_the_control_runs(docker, monkeypatch):
    """The agent's server (kept: it listens) takes the tests' connection and never answers, so
    its own grading times out and the control (the oracle in a fresh sandbox) is graded while
    the server still runs: it could spend the host's CPU until the control times out too
    (``infra_error``). Its ticks show it was frozen (``docker pause``) meanwhile: none falls
    inside most of the control's grading (on main it ticked every 0.1 s throughout)."""
    from agentpost.tasks import evaluate as ev

    spans, real = [], ev.control_observation

    def timed(*a):
        t0 = time.time()
        try:
            return real(*a)
        finally:
            spans.append((t0, time.time()))

    monkeypatch.setattr(ev, "_CONTROLS", {})  # graded here, not remembered from another test
    monkeypatch.setattr(ev, "control_observation", timed)
    task = load_task(SHAPES / "service-left-running")
    with docker.create(spec_for(task, backend=docker)) as box:
        if not box.spec.keep_processes:
            pytest.skip("this task's sandbox keeps no processes")
        prepare(task, box)
        assert box.exec(HANG_AND_TICK, timeout_s=60).exit_code == 0
        res = evaluate(dataclasses.replace(task, verifier_timeout_s=10.0), box)
        ticks = [float(t) for t in box.get("/app/ticks").split()]
    assert_zero(res)
    assert "ran out of time" in res.details["failure"] and res.details["control"] == "clean"
    [(t0, t1)] = spans
    # a control was graded (a fresh sandbox, the oracle, tests): 1.5 s on a quiet machine, many
    # times the 0.1 s between ticks, so a gap over half of it cannot be ticking through
    assert t1 - t0 > 1.0, t1 - t0
    # frozen for most of it (``docker pause`` / ``unpause`` themselves take a while under load)
    gap = max(b - a for a, b in zip(ticks, ticks[1:], strict=False) if b > t0 and a < t1)
    assert gap > (t1 - t0) / 2, (gap, t1 - t0, getattr(box, "pause_error", "no pause"))


RACER = r"""nohup python3 -c "
import os, socket, time
s = socket.socket()
s.bind(('127.0.0.1', 0))
s.listen(1)
while True:
    for cmd in ('ln -sfn /tests/expected.txt /app/out', 'mkdir -p /logs/verifier',
                'echo 1 > /logs/verifier/reward.txt', 'pkill -9 -f tests/tes[t].sh'):
        os.system(cmd + ' 2>/dev/null')
    time.sleep(0.01)
" >/dev/null 2>&1 &
sleep 1"""


def test_a_kept_server_cannot_race_the_tests(anyb):
    """A process that holds a listening socket is kept for the tests (Harbor's semantics); it
    keeps re-planting the answer link, writing a reward and killing ``test.sh`` while the
    tests run. The tests read a copy of the agent's dirs, in their own PID namespace and
    ``/logs``: nothing of it reaches them. (A guard: this held on main already, by the design
    of the verifier's namespace; no fix came with it.)"""
    task = load_task(FIX / "answer-file")
    with anyb.create(spec_for(task, backend=anyb, keep_processes=True)) as box:
        prepare(task, box)
        assert box.exec(RACER, cwd=task.workdir, timeout_s=60).exit_code == 0
        res = evaluate(task, box)
        alive = box.exec("ls -l /app/out; pgrep -af python3", timeout_s=30).stdout
    assert_zero(res)
    assert "/tests/expected.txt" in alive, alive  # it ran all along


# --- docker's keeper fallback (an image without python3, or AGENTPOST_SANDBOX_EXEC=fresh) -----

# the agent's module, imported by a third-party test with the test's powers: a daemon that keeps
# writing reward 1 after test.sh wrote its 0, until it is killed
REWARD_DAEMON = """import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        end = time.time() + 60
        while time.time() < end:
            try:
                with open('/logs/verifier/.r', 'w') as f:
                    f.write('1')
                os.replace('/logs/verifier/.r', '/logs/verifier/reward.txt')
            except OSError:
                pass
            time.sleep(0.002)
    os._exit(0)
"""


@pytest.mark.parametrize("mode", ["server", "fresh"])
def test_a_process_outliving_the_tests_counts_in_docker_fallback(docker, monkeypatch, mode):
    """Code the tests run without ``as-agent`` has the test's powers (out of scope), but a
    process it leaves behind is still a stray, so the run is no clean verdict. In docker's
    keeper fallback (``fresh``: each exec a ``docker exec``, a sweep after it) strays were
    killed but not counted: a daemon rewriting ``reward.txt`` after ``test.sh`` wrote 0 got
    reward 1 there (and 0 with the executor)."""
    monkeypatch.setenv("AGENTPOST_SANDBOX_EXEC", mode)
    monkeypatch.setattr("agentpost.tasks.evaluate._CONTROLS", {})
    turn = f"cat > /app/answer.py <<'EOF'\n{REWARD_DAEMON}EOF"
    res = attack(docker, load_task(FIX / "harbor-pytest"), turn)
    assert_zero(res)
    assert "outlived" in res.details["failure"], res.details
