"""Whole-sandbox limits (issue 19, item 4): a memory cgroup for all of a sandbox's processes, a
disk quota on its writable dirs, /tmp and home together, and the reason an exec was ended.

Real sandboxes throughout; the disk-quota fallback (no mount rights) is exercised by making the
quota mount fail, which is what an unprivileged user gets."""

from __future__ import annotations

import os

import pytest
from sandbox_testkit import bwrap_backend

from agentpost.sandbox import hostfs
from agentpost.sandbox.base import Limits, MiB, SandboxSpec

CHILDREN_HOLD = (  # three processes of 60 MiB each: under any per-process limit, over 128 MiB
    "import os, time\n"
    "for _ in range(3):\n"
    "    if os.fork() == 0:\n"
    "        b = bytearray(60 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(2); os._exit(0)\n"
    "for _ in range(3):\n"
    "    os.wait()\n"
    "print('all done')\n"
)


def test_memory_limit_holds_for_the_sandbox_as_a_whole():
    spec = SandboxSpec(limits=Limits(memory_bytes=1024 * MiB, sandbox_memory_bytes=128 * MiB))
    with bwrap_backend().create(spec) as box:
        if box.cgroup is None:
            pytest.skip("no writable memory cgroup here: only the per-process RLIMIT_AS holds")
        r = box.exec(["python3", "-c", CHILDREN_HOLD], timeout_s=60)
        assert r.killed == "memory limit", r
        ok = box.exec(["python3", "-c", "b = bytearray(60 << 20); print('fits')"])
        assert ok.stdout == "fits\n" and ok.killed is None  # the next exec starts afresh
        path = box.cgroup.path
    assert not os.path.exists(path)  # close removes the cgroup


def test_disk_quota_covers_all_writable_dirs_together():
    spec = SandboxSpec(limits=Limits(disk_bytes=24 * MiB, file_bytes=16 * MiB))
    with bwrap_backend().create(spec) as box:
        if not box.layout.quota:
            pytest.skip("no mount rights: see test_disk_quota_fallback_kills")
        r = box.exec(
            "for d in /app /logs /tmp /root; do head -c 10M /dev/zero > $d/f; done; echo rc=$?"
        )
        assert r.killed == "disk quota" and "No space left" in r.stderr, r
        used = sum(os.path.getsize(os.path.join(p, "f")) for p in _dirs(box) if _has(p))
        assert used <= 24 * MiB
        box.exec("rm -f /app/f /logs/f /tmp/f /root/f")
        r = box.exec("head -c 1M /dev/zero > /app/g && echo fine")
        assert r.stdout == "fine\n" and r.killed is None  # room again once files are gone
    with bwrap_backend().create(spec) as other:  # one sandbox's quota is its own
        assert other.exec("head -c 8M /dev/zero > /app/f && echo ok").stdout == "ok\n"


def test_disk_quota_fallback_kills(monkeypatch):
    monkeypatch.setattr(hostfs, "mount_quota", lambda *a: False)  # what a non-root user gets
    spec = SandboxSpec(limits=Limits(disk_bytes=16 * MiB, file_bytes=8 * MiB))
    with bwrap_backend().create(spec) as box:
        assert not box.layout.quota
        r = box.exec("i=0; while true; do head -c 4M /dev/zero > /app/f$i; i=$((i+1)); done")
        assert r.killed == "disk quota" and r.exit_code is not None and not r.timed_out, r


def test_output_cap_and_timeout_say_why():
    spec = SandboxSpec(limits=Limits(output_bytes=64 * 1024))
    with bwrap_backend().create(spec) as box:
        r = box.exec(["yes"], timeout_s=30)
        assert r.killed == "output cap" and r.truncated and r.duration_s < 30
        r = box.exec(["sleep", "5"], timeout_s=0.5)
        assert r.killed == "timeout" and r.timed_out
        r = box.exec("head -c 100000 /dev/zero | tr '\\0' x")
        assert r.truncated and r.killed is None  # cut, but not killed: it ended by itself


def _dirs(box):
    return [box.layout.mounts["/app"], box.layout.mounts["/logs"], *box.layout.private.values()]


def _has(p):
    return os.path.exists(os.path.join(p, "f"))


def test_the_agent_sees_why_its_command_was_killed():
    from agentpost.agent.formats import SUBMIT_COMMAND
    from agentpost.agent.loop import AgentLoop, LoopConfig
    from agentpost.agent.scripted import ScriptedModel

    model = ScriptedModel(["```bash\nyes\n```", f"```bash\n{SUBMIT_COMMAND}\n```"])
    spec = SandboxSpec(limits=Limits(output_bytes=64 * 1024))
    with bwrap_backend().create(spec) as box:
        traj = AgentLoop(model, box, LoopConfig(mode="text")).run("go", workdir="/app")
    assert traj.turns[0].observations[0].text.endswith("[killed: output cap]")
