"""The verifier's own namespace (``verifier_sandbox``) and kept processes, on both backends:
what the tests see of the agent, what the agent can do to the tests, and the executor's report
of strays and stopped commands."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentpost.sandbox.base import SandboxSpec
from agentpost.sandbox.registry import get_backend
from agentpost.tasks.verifier import read_result, run_tests

pytestmark = pytest.mark.timeout(600)
SERVE = (
    "cd /tmp && (python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &);"
    ' sleep 300 & for i in $(seq 50); do python3 -c "import urllib.request as u;'
    " u.urlopen('http://127.0.0.1:8765/')\" 2>/dev/null && break; sleep 0.1; done"
)
FETCH = (
    "python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:8765/').status)\""
)


@pytest.fixture(scope="module", params=["bwrap", "docker"])
def anyb(request):
    b = get_backend(request.param)
    if not b.available():
        pytest.skip(f"{request.param} sandbox not available")
    return b


def _image(b):
    if b.name != "docker":
        return {}
    from agentpost.sandbox.images import ensure_base

    return {"image": ensure_base(b, "python")}


def test_kept_processes_survive_execs_and_only_servers_reach_the_tests(anyb):
    spec = SandboxSpec(keep_processes=True, **_image(anyb))
    with anyb.create(spec) as box:
        assert box.exec(SERVE, timeout_s=60).exit_code == 0
        assert box.exec("pgrep -x sleep >/dev/null").exit_code == 0  # it outlived its exec
        noisy = box.exec("(yes > /dev/stdout &); echo started", timeout_s=20)
        assert noisy.exit_code == 0 and "started" in noisy.stdout  # a talker never blocks us
        assert box.exec("echo next").stdout == "next\n"
        box.exec("echo agent > /app/a.txt")
        with box.verifier_sandbox() as v:
            assert v.kept >= 1
            r = v.exec(f"{FETCH}; cat /app/a.txt; ls -A /tests /logs; ps -eo comm= | sort -u")
            assert r.stdout.splitlines()[:2] == ["200", "agent"]
            procs = set(r.stdout.split())
            assert not procs & {"sleep", "yes", "http.server"}  # none of the agent's in view
            v.exec("echo mine > /app/a.txt; echo t > /tests/t")
        after = box.exec(f"pgrep -x sleep; pgrep -x yes; {FETCH}; cat /app/a.txt; ls -A /tests")
        assert after.stdout.split() == ["200", "agent"]  # a copy: the tests changed theirs only


def test_without_kept_processes_the_tests_see_the_agents_dirs_and_nothing_else(anyb):
    with anyb.create(SandboxSpec(**_image(anyb))) as box:
        box.exec("mkdir -p /logs/verifier /tests; echo 1 > /logs/verifier/reward.txt;"
                 " echo stale > /tests/t; echo x > ~/.bashrc; echo agent > /app/a.txt")  # fmt: skip
        with box.verifier_sandbox() as v:
            assert v.kept == 0
            r = v.exec(
                "cat /app/a.txt; find /tests /logs /tmp -type f; cat ~/.bashrc 2>/dev/null | grep -xc x;"
                " echo v > /app/b"
            )
            assert r.stdout.split() == ["agent", "0"], r.stdout  # no stale file, no planted rc
            getattr(v, "give_back", lambda: None)()  # what run_tests does after the tests
        assert box.exec("cat /app/b").stdout == "v\n"  # bound, not copied
        if anyb.name == "bwrap" and os.geteuid() == 0:
            assert box.exec("stat -c %u /app/b").stdout == "0\n"  # given back to the agent


def test_strays_and_stopped_commands_are_reported(anyb):
    with anyb.create(SandboxSpec(**_image(anyb))) as box:
        stray = box.exec("sleep 100 & echo started")
        assert stray.strays >= 1 and stray.exit_code == 0
        assert box.exec("true").strays == 0
        stopped = box.exec("kill -STOP $$; echo never", timeout_s=3)
        assert stopped.stopped and stopped.timed_out and "never" not in stopped.stdout


def test_as_agent_cannot_write_the_reward_or_signal_the_test(anyb, tmp_path: Path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text(
        "mkdir -p /logs/verifier; cd /app\n"
        "\"$AGENTPOST_AS_AGENT\" -- sh -c 'echo 1 > /logs/verifier/reward.txt' 2>/dev/null"
        " && echo wrote >> /logs/verifier/log\n"
        '"$AGENTPOST_AS_AGENT" -- sh -c "kill -0 $$" 2>/dev/null && echo signalled >> /logs/verifier/log\n'
        '"$AGENTPOST_AS_AGENT" -- cat /tests/test.sh >/dev/null 2>&1 && echo read >> /logs/verifier/log\n'
        '"$AGENTPOST_AS_AGENT" -- sh -c "echo ok > /app/by-agent" && echo agent-ok >> /logs/verifier/log\n'
        "echo 0 > /logs/verifier/reward.txt\n"
    )
    with anyb.create(SandboxSpec(**_image(anyb))) as box:
        run = run_tests(box, tests_dir=tests, extra={}, command="bash /tests/test.sh", cwd="/app",
                        timeout_s=60, env={}, reads=("reward.txt", "log"), exec_kw={})  # fmt: skip
        assert run.problem is None and run.res.exit_code == 0, run.res
        assert (run.files["reward.txt"], run.files["log"]) == (b"0\n", b"agent-ok\n")
        assert box.exec("cat /app/by-agent").stdout == "ok\n"


def test_read_result_takes_regular_files_only(tmp_path: Path):
    logs = tmp_path / "logs"
    (logs / "verifier").mkdir(parents=True)
    (logs / "verifier" / "ok.txt").write_text("1\n")
    os.mkfifo(logs / "verifier" / "fifo")
    (logs / "verifier" / "link").symlink_to(logs / "verifier" / "ok.txt")
    (logs / "verifier" / "dir").mkdir()
    t = time.monotonic()
    assert read_result(str(logs), "verifier/ok.txt") == b"1\n"
    assert "not a regular file" in read_result(str(logs), "verifier/fifo")
    assert "symbolic link" in read_result(str(logs), "verifier/link")
    assert "not a regular file" in read_result(str(logs), "verifier/dir")
    assert read_result(str(logs), "verifier/none") == "missing"
    assert "larger" in read_result(str(logs), "verifier/ok.txt", limit=1)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "reward.txt").write_text("1\n")
    os.rename(logs / "verifier", tmp_path / "old")
    (logs / "verifier").symlink_to(tmp_path / "elsewhere")
    assert "symbolic link" in read_result(str(logs), "verifier/reward.txt")
    assert time.monotonic() - t < 5  # the FIFO never blocked


# links the sweep must remove (a missing dir on the way, a chain, a loop-free relative hop, a
# magic link) and ones it must keep (inside the agent's dirs, dangling elsewhere)
LINKS = (
    "mkdir -p /app/d/e && cd /app && ln -s /tests/sub/expected.txt gone1 && ln -s d/../../logs"
    " gone2 && ln -s /app/d/hop gone3 && ln -s ../../tests d/hop && ln -s /dev/fd/3 gone4 &&"
    " ln -s /app/d/e keep1 && ln -s /nowhere/x keep2 && ln -s e d/keep3"
)


@pytest.mark.parametrize("sweep", ["python", "shell"])
def test_the_link_sweep_removes_links_into_the_verifiers_dirs(backend, sweep):
    """Both sweeps (the image's python3; ``find``/``readlink`` where it has none) in a bwrap
    sandbox whose /tests and /logs are empty, as in the verifier's namespace at sweep time."""
    from agentpost.tasks import verifier

    with backend.create(SandboxSpec()) as box:
        assert box.exec(LINKS).exit_code == 0
        argv = ["python3", "-I", "-S", "-c", verifier.SWEEP_PY, "1000", "/app"]
        if sweep == "shell":
            argv = ["/bin/sh", "-c", verifier.SWEEP_SH, "sweep", "/app"]
        r = box.exec(argv)
        assert verifier.SWEEP_DONE in r.stdout, r.stdout + r.stderr
        left = box.exec("cd /app && find . -type l | sort").stdout.split()
    assert left == ["./d/keep3", "./keep1", "./keep2"]
