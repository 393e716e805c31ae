"""The density rule of spec b.8: ρ, ρ_pos, dynamic-filter survival per dataset and per CWE and
the rl/hg choice (pure), then `agentpost security route` with a scripted policy and with an
endpoint on the loopback server (real rollouts and grading in bwrap sandboxes)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentpost.security.route import ProbeGroup, choose, density, route

CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]


def g(task, ds, cwes, rewards, aborted=()):
    return ProbeGroup(task, ds, tuple(cwes), tuple(rewards), tuple(aborted))


# AutoBax-like: 3 of 10 rollouts at +1 (ρ 0.30); PatchEval-like: 3 of 20 (ρ 0.15)
GROUPS = [
    g("a1", "autobax", [79], [1, 0.5, -0.5, -1, 1]),
    g("a2", "autobax", [89], [1, -0.5, -0.5, -0.5, -1]),
    g("p1", "patcheval", [22], [1, 1, 1, -0.5, -0.5]),
    g("p2", "patcheval", [434], [-0.5, -0.5, -0.5, -0.5, -0.5]),
    g("p3", "patcheval", [434], [0.5, 0.5, 0.5, 0.5, 0.5]),
    g("p4", "patcheval", [79], [-1, -1, 0.5, -0.5, -0.5]),
]


def test_the_paper_densities_route_autobax_to_rl_and_patcheval_to_hg():
    doc = route(GROUPS)
    ab, pe = doc["datasets"]["autobax"], doc["datasets"]["patcheval"]
    assert (ab["rho"], ab["rho_pos"], ab["choice"]) == (0.3, 0.4, "rl")
    assert (pe["rho"], pe["rho_pos"], pe["choice"]) == (0.15, 0.45, "hg")  # 9 of 20 > 0
    # p2: no positive reward (zero variance), p3: zero variance at +0.5 → both dropped
    assert pe["survival"] == 0.5 and pe["filter_reasons"] == {"kept": 2, "zero_variance": 2}
    assert doc["decisions"] == {"autobax": "rl", "patcheval": "hg"}
    assert doc["overall"]["n"] == 30 and doc["overall"]["rho"] == pytest.approx(6 / 30)


def test_route_by_cwe_sends_a_category_without_positive_rollouts_to_hints():
    doc = route(GROUPS, route_by="cwe")
    assert doc["cwes"]["CWE-434"]["rho"] == 0 and doc["decisions"]["CWE-434"] == "hg"
    assert doc["cwes"]["CWE-79"]["rho"] == 0.2  # 2 of 10: at the threshold, so rl
    assert doc["decisions"]["CWE-22"] == "rl" and doc["decisions"]["CWE-79"] == "rl"
    assert route(GROUPS, threshold=0.25, route_by="cwe")["decisions"]["CWE-79"] == "hg"


def test_aborted_rollouts_leave_rho_and_sink_their_group():
    d = density([g("t", "d", [1], [1, 0.0, -1], [False, True, False])])
    assert (d["n"], d["n_aborted"], d["rho"], d["survival"]) == (2, 1, 0.5, 0.0)
    assert d["filter_reasons"] == {"aborted": 1}
    assert density([g("t", "d", [1], [0.0], [True])])["rho"] is None
    assert choose(None) is None and choose(0.2) == "rl" and choose(0.199) == "hg"
    with pytest.raises(ValueError):
        route(GROUPS, route_by="task")


def cli(*args):
    return subprocess.run([*CLI, "security", "route", *args], capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def test_route_prints_rho_and_its_choice_with_a_scripted_policy(backend):
    r = cli("--task", "calculator", "--task", "file-download", "-G", "2")
    assert r.returncode == 0, r.stderr[-1500:]
    assert "dataset secure" in r.stdout and "rho=" in r.stdout
    assert "route by dataset (threshold 0.2): secure: " in r.stdout
    r = cli("--task", "calculator", "--task", "file-download", "-G", "2", "--json",
            "--policy", "scripted/functional-only", "--route-by", "cwe")  # fmt: skip
    doc = json.loads(r.stdout)
    # the functional-only agent writes the vulnerable reference: func ✓ sec ✗ everywhere
    assert doc["overall"]["rho"] == 0 and doc["overall"]["rho_pos"] == 1
    assert doc["overall"]["survival"] == 0  # all +0.5: zero variance
    assert doc["decisions"] == {"CWE-22": "hg", "CWE-94": "hg"}
    assert doc["producer"]["args"]["policy"].startswith("scripted:functional-only")


def test_route_probes_an_endpoint(backend):
    from agentpost.agent.loopback import LoopbackServer

    submit = {"content": "done", "tool_calls": [{"name": "submit", "arguments": {}}]}
    with LoopbackServer(lambda body: submit) as srv:
        r = cli("--base-url", srv.url, "--model", "m", "--task", "calculator", "-G", "2", "--json")
        assert r.returncode == 0, r.stderr[-1500:]
        assert len(srv.requests) == 2
    doc = json.loads(r.stdout)
    assert (
        doc["overall"]["n"] == 2
        and doc["overall"]["rho"] == 0
        and doc["decisions"] == {"secure": "hg"}
    )
    bad = cli("--base-url", "http://127.0.0.1:9/v1", "--task", "calculator")
    assert bad.returncode != 0 and "--model" in bad.stderr
    assert "--task" in cli("--task", "nope").stderr


def test_route_by_split_side_makes_one_dataset_per_side(backend):
    r = cli("--side", "both", "--task", "calculator", "--task", "settings-xml", "-G", "2", "--json",
            "--policy", "secure-minded")  # fmt: skip
    assert r.returncode == 0, r.stderr[-1500:]
    doc = json.loads(r.stdout)
    assert set(doc["datasets"]) == {"secure:train", "secure:heldout"}
    assert doc["datasets"]["secure:heldout"]["n"] == 2 and doc["cwes"]["CWE-611"]["rho"] == 1
    # a held-out task is not on the train side
    bad = cli("--side", "train", "--task", "settings-xml")
    assert bad.returncode != 0 and "--task" in bad.stderr
    assert "--side" in cli("--side", "middle").stderr
