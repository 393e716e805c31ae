"""bench/sandbox: what a sandbox costs, measured side by side in one run.

    .venv/bin/python bench/sandbox.py [--n 50] [--json]

Sections (each a function returning a dict; add new ones to SECTIONS):
- exec: the median wall time of one sandboxed exec (bubblewrap, a sandbox created once and
  reused, as replay does) against a plain subprocess of the same command, interleaved so both
  see the same machine load; plus the one-off cost of creating and closing a sandbox.
- views: the hermetic root (the default: system dirs only) against today's mirror of every host
  entry, and the whole-sandbox limits (memory cgroup, tmpfs disk quota) against none, measured
  interleaved in one run: median ms to create+close a sandbox and per exec of ``true``.
- replay: ``--n`` full candidate-state replays (fresh sandbox, task environment, every shell
  call, the evaluator) over the bundled suite, 1 and 2 workers in interleaved pairs: wall
  time, trajectories per second, median seconds per replay, the ratio per pair with the load,
  the median ratio. On a machine whose cores are already busy, 2 workers cannot beat 1: read
  the speedup together with the load.
- diagnose: ``agentpost diagnose`` (heuristic panel, no bootstrap) on ``--n`` trajectories,
  made by ``agentpost run --policy all`` on the bundled suite (92 trajectories) repeated under
  new ids until there are ``--n`` (so no replay is a cache hit), with each of
  ``--diagnose-workers`` replay workers: trajectories and replays per second, the load average
  before and after each run. Files live under ``bench/out/diagnose/`` (git-ignored); the
  generating run is reused when present.
- executor: in one run, interleaved, the median ms of a plain host ``subprocess.run(["true"])``,
  of ``true`` through a per-exec sandbox (the fallback: a fresh bwrap / a ``docker exec`` per
  command) and through the persistent executor of a sandbox created once, for bwrap and docker
  (where a daemon answers), with the ratios to plain, the executor's start cost (create + first
  exec + close against create + close), the 10th percentiles (the cost when the shared machine
  leaves the exec alone) and the load average before and after. Goal (issue 18): the
  executor's exec ≤ 2x plain for bwrap.
- floor: inside one existing sandbox, fork+exec of ``true`` plain and with fresh user/PID/
  mount/IPC/network namespaces per command (``probes/ns_floor.py``), beside a plain host
  subprocess and a sandboxed exec: the per-command floor of a persistent executor.
- verifier: one grading in the verifier's own namespace against the grading in the agent's own
  sandbox as it was before issue 26, interleaved, bubblewrap and docker (``sandbox_verifier.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sandbox_verifier import bench_verifier, print_verifier  # noqa: E402

FORMAT_VERSION = 1
COMMANDS = {"true": ["true"], "bash -c 'echo hi'": ["bash", "-c", "echo hi"]}


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_exec(n: int) -> dict:
    """Median ms per exec, sandboxed vs plain, for each command in COMMANDS."""
    from agentpost.sandbox.bwrap import BwrapBackend

    backend = BwrapBackend()
    if not backend.available():
        return {"skipped": "bubblewrap cannot start a sandbox here"}
    rows = []
    with backend.create() as box:
        for label, cmd in COMMANDS.items():
            box.exec(cmd)  # warm caches
            plain, boxed = [], []
            for _ in range(n):
                t = time.perf_counter()
                subprocess.run(cmd, capture_output=True, check=True)
                plain.append(time.perf_counter() - t)
                t = time.perf_counter()
                result = box.exec(cmd)
                boxed.append(time.perf_counter() - t)
                assert result.exit_code == 0, result
            p, b = _median_ms(plain), _median_ms(boxed)
            rows.append(
                {
                    "command": label,
                    "plain_ms": round(p, 3),
                    "sandboxed_ms": round(b, 3),
                    "overhead_ms": round(b - p, 3),
                    "ratio": round(b / p, 2),
                }
            )
    lifecycle = []
    for _ in range(max(5, n // 5)):
        t = time.perf_counter()
        backend.create().close()
        lifecycle.append(time.perf_counter() - t)
    return {"n": n, "commands": rows, "create_close_ms": round(_median_ms(lifecycle), 3)}


VARIANTS = {  # name: (view, limits on)
    "mirror, no limits (before)": ("mirror", False),
    "hermetic, no limits": ("hermetic", False),
    "hermetic + limits (default)": ("hermetic", True),
}


def bench_views(n: int) -> dict:
    """Median ms per sandbox (create+close) and per exec for each variant, interleaved."""
    from agentpost.sandbox.base import Limits, SandboxSpec
    from agentpost.sandbox.bwrap import BwrapBackend

    backend = BwrapBackend()
    if not backend.available():
        return {"skipped": "bubblewrap cannot start a sandbox here"}
    specs = {
        name: SandboxSpec(view=view, limits=Limits() if on else _no_limits())
        for name, (view, on) in VARIANTS.items()
    }
    life = {k: [] for k in specs}
    execs = {k: [] for k in specs}
    boxes = {k: backend.create(spec) for k, spec in specs.items()}
    try:
        for box in boxes.values():
            box.exec(["true"])  # warm caches
        for _ in range(n):
            for name, spec in specs.items():
                t = time.perf_counter()
                backend.create(spec).close()
                life[name].append(time.perf_counter() - t)
                t = time.perf_counter()
                assert boxes[name].exec(["true"]).exit_code == 0
                execs[name].append(time.perf_counter() - t)
        limits_on = {k: bool(b.cgroup) and b.layout.quota for k, b in boxes.items()}
    finally:
        for box in boxes.values():
            box.close()
    base = "mirror, no limits (before)"
    rows = []
    for name in specs:
        c, e = _median_ms(life[name]), _median_ms(execs[name])
        rows.append(
            {
                "variant": name,
                "create_close_ms": round(c, 3),
                "exec_ms": round(e, 3),
                "exec_ratio_vs_mirror": round(e / _median_ms(execs[base]), 2),
                "create_ratio_vs_mirror": round(c / _median_ms(life[base]), 2),
                "limits_active": limits_on[name],
            }
        )
    return {"n": n, "rows": rows}


def _no_limits():
    from agentpost.sandbox.base import Limits

    return Limits(disk_bytes=0, sandbox_memory_bytes=0)


# --- replay section (H3): candidate-state replay throughput -----------------------------------


def _repair_trajectory(task):
    """Explore, write the task's wrong solution, run its check, repair with the oracle, finish."""
    from agentpost.trajectory.model import Producer, ToolCall, Trajectory, Turn

    def sh(c: str) -> ToolCall:
        return ToolCall(name="bash", arguments={"command": c}, command=c, kind="shell")

    calls = [sh(c) for c in task.explore]
    calls += [sh("(\n" + task.wrong_solutions[0].read_text() + ")"), sh(task.check)]
    calls += [sh("(\n" + task.solution_script.read_text() + ")")]
    calls += [ToolCall(name="submit", kind="control")]
    turns = [Turn(index=i, tool_calls=[c]) for i, c in enumerate(calls)]
    return Trajectory(
        id=f"bench-{task.id}",
        task_id=task.id,
        turns=turns,
        producer=Producer(name="bench/sandbox", version="0.1.0"),
    )


REPLAY_ROUNDS = 3  # interleaved pairs of 1-worker and 2-worker batches


def bench_replay(n: int) -> dict:
    """Full replays (fresh sandbox, environment, every call, evaluator) of ``n`` trajectories
    over the bundled suite with 1 and 2 workers, in ``REPLAY_ROUNDS`` interleaved pairs (order
    alternating, after one warm-up replay), so a change in machine load between batches shows
    up as spread across pairs instead of as a speedup. Each pair gives a ratio with the load
    average before it; the speedup is the median ratio. Also the parent's own CPU per replay
    (threads share its GIL: the serial part) against the wall time."""
    import resource

    from agentpost.replay.run import replay
    from agentpost.sandbox.bwrap import BwrapBackend
    from agentpost.sandbox.executors import LocalExecutor
    from agentpost.tasks.loader import bundled_suite_path, load_suite

    backend = BwrapBackend()
    if not backend.available():
        return {"skipped": "bubblewrap cannot start a sandbox here"}
    tasks = load_suite(bundled_suite_path())
    jobs = [(tasks[i % len(tasks)], _repair_trajectory(tasks[i % len(tasks)])) for i in range(n)]
    calls = sum(
        len([c for t in tr.turns for c in t.tool_calls if c.kind == "shell"]) for _, tr in jobs
    )

    def one(job):
        t = time.perf_counter()
        res = replay(job[1], job[0], backend=backend)
        return res, time.perf_counter() - t

    def batch(workers: int) -> dict:
        load = round(os.getloadavg()[0], 2)
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        with LocalExecutor(max_workers=workers) as pool:
            out = pool.map(one, jobs)
        wall = time.perf_counter() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = cpu1.ru_utime - cpu0.ru_utime + cpu1.ru_stime - cpu0.ru_stime
        ok = [o for o in out if isinstance(o, tuple) and o[0].status == "ok"]
        return {
            "workers": workers,
            "trajectories": n,
            "wall_s": round(wall, 3),
            "trajectories_per_s": round(n / wall, 2),
            "median_replay_s": round(statistics.median(o[1] for o in ok), 3) if ok else None,
            "ok": len(ok),
            "resolved": sum(1 for o in ok if o[0].resolved),
            "parent_cpu_s_per_replay": round(cpu / n, 4),
            "load_before": load,
        }

    one(jobs[0])  # warm-up: first sandbox, page cache, lazy imports
    pairs = []
    for r in range(REPLAY_ROUNDS):
        order = (1, 2) if r % 2 == 0 else (2, 1)
        got = {w: batch(w) for w in order}
        pairs.append(
            {
                "w1": got[1],
                "w2": got[2],
                "ratio": round(got[1]["wall_s"] / got[2]["wall_s"], 2),
                "load": [got[w]["load_before"] for w in order],
            }
        )
    ratios = [p["ratio"] for p in pairs]
    # rows: the pair whose ratio is the median (kept for readers of the old single-pair output)
    mid = pairs[ratios.index(statistics.median_low(ratios))]
    return {
        "n": n,
        "shell_calls": calls,
        "rows": [mid["w1"], mid["w2"]],
        "pairs": pairs,
        "speedup_2_vs_1": statistics.median(ratios),
    }


# --- diagnose section (issue 18, item 3): diagnose throughput on many trajectories -----------

OUT = Path(__file__).resolve().parent / "out" / "diagnose"
DIAGNOSE_WORKERS = (1, 2)


def _cli() -> str:
    return str(Path(sys.executable).with_name("agentpost"))


def _diagnose_input(n: int) -> Path:
    """``n`` trajectories: the scripted policies' run on the bundled suite, repeated with
    the copy number in each id (distinct ids, so distinct trajectory hashes and replays)."""
    run = OUT / "run"
    if not (run / "trajectories.jsonl").exists():
        r = subprocess.run([_cli(), "run", "--policy", "all", "-o", str(run)], capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(f"agentpost run failed: {r.stderr.decode()[-500:]}")
    lines = [x for x in (run / "trajectories.jsonl").read_bytes().splitlines() if x.strip()]
    out = OUT / f"input-{n}.jsonl"
    with open(out, "wb") as f:
        for i in range(n):
            d = json.loads(lines[i % len(lines)])
            d["id"] = f"copy{i // len(lines)}-{d['id']}"
            f.write(json.dumps(d).encode() + b"\n")
    return out


def bench_diagnose(n: int) -> dict:
    """Wall time of ``agentpost diagnose`` on ``n`` trajectories per replay-worker count."""
    from agentpost.sandbox.bwrap import BwrapBackend

    if not BwrapBackend().available():
        return {"skipped": "bubblewrap cannot start a sandbox here"}
    src = _diagnose_input(n)
    rows = []
    for workers in DIAGNOSE_WORKERS:
        run_dir = OUT / f"run-{n}-w{workers}"
        shutil.rmtree(run_dir, ignore_errors=True)  # a fresh store: nothing read back
        load_before = round(os.getloadavg()[0], 2)
        t0 = time.perf_counter()
        r = subprocess.run(
            [_cli(), "diagnose", str(src), "-o", str(run_dir), "--bootstrap", "0", "--no-progress",
             "--workers", str(workers)],
            capture_output=True,
        )  # fmt: skip
        wall = time.perf_counter() - t0
        if r.returncode != 0:
            raise RuntimeError(f"agentpost diagnose failed: {r.stderr.decode()[-500:]}")
        status = json.loads((run_dir / "metrics.json").read_text())["replay"]["status"]
        replays = sum(status.values())
        rows.append(
            {
                "workers": workers,
                "trajectories": n,
                "replays": replays,
                "replay_status": status,
                "wall_s": round(wall, 2),
                "trajectories_per_s": round(n / wall, 2),
                "replays_per_s": round(replays / wall, 2),
                "load_before": load_before,
                "load_after": round(os.getloadavg()[0], 2),
            }
        )
    out = {"n": n, "rows": rows}
    if len(rows) >= 2:
        out["speedup_2_vs_1"] = round(rows[0]["wall_s"] / rows[1]["wall_s"], 2)
    return out


# --- floor section (issue 18, item 1): what a persistent executor could reach ---------------


def bench_floor(n: int) -> dict:
    """Per-command cost inside an existing sandbox by namespace set-up (``probes/ns_floor.py``)
    beside a plain host subprocess and today's sandboxed exec, in one run."""
    from agentpost.sandbox.bwrap import BwrapBackend

    backend = BwrapBackend()
    if not backend.available():
        return {"skipped": "bubblewrap cannot start a sandbox here"}
    probe = (Path(__file__).resolve().parent / "probes" / "ns_floor.py").read_text()
    with backend.create() as box:
        r = box.exec(["python3", "-c", probe, str(n)], timeout_s=300)
        if r.exit_code != 0:
            return {"skipped": f"probe failed in the sandbox: {r.stderr.strip()[-300:]}"}
        inside = json.loads(r.stdout)
        plain, boxed = [], []
        for _ in range(n):
            t = time.perf_counter()
            subprocess.run(["true"], check=True)
            plain.append(time.perf_counter() - t)
            t = time.perf_counter()
            box.exec(["true"])
            boxed.append(time.perf_counter() - t)
    return {
        "n": n,
        "host_plain_ms": round(_median_ms(plain), 3),
        "sandboxed_exec_ms": round(_median_ms(boxed), 3),
        "inside_sandbox_ms": inside,
        "load": round(os.getloadavg()[0], 2),
    }


# --- executor section (issue 18, item 1): the persistent executor against plain and fresh -------


def _executor_backends() -> dict:
    from agentpost.sandbox.base import SandboxSpec
    from agentpost.sandbox.bwrap import BwrapBackend
    from agentpost.sandbox.docker import DockerBackend

    out = {}
    bwrap = BwrapBackend()
    if bwrap.available():
        out["bwrap"] = (bwrap, SandboxSpec())
    docker = DockerBackend()
    if docker.available():
        from agentpost.sandbox.images import ensure_base

        out["docker"] = (docker, SandboxSpec(image=ensure_base(docker, "python")))
    return out


def _create(backend, spec, mode: str):
    from agentpost.sandbox.bwrap_server import ENV_MODE

    old = os.environ.get(ENV_MODE)
    os.environ[ENV_MODE] = mode  # read when the sandbox is made
    try:
        return backend.create(spec)
    finally:
        os.environ.pop(ENV_MODE) if old is None else os.environ.update({ENV_MODE: old})


def bench_executor(n: int) -> dict:
    """Median ms of ``true``: plain, per-exec sandbox, persistent executor (interleaved)."""
    backends = _executor_backends()
    if not backends:
        return {"skipped": "neither bubblewrap nor a docker daemon can start a sandbox here"}
    out = {"n": n, "load_before": round(os.getloadavg()[0], 2), "rows": []}
    for name, (backend, spec) in backends.items():
        fresh, server = _create(backend, spec, "fresh"), _create(backend, spec, "server")
        samples: dict[str, list[float]] = {"plain": [], "fresh": [], "executor": []}
        try:
            for box in (fresh, server):
                assert box.exec(["true"]).exit_code == 0  # warm; starts the executor
            for _ in range(n):
                for label, box in (("plain", None), ("fresh", fresh), ("executor", server)):
                    t = time.perf_counter()
                    if box is None:
                        subprocess.run(["true"], check=True)
                    else:
                        box.exec(["true"])
                    samples[label].append(time.perf_counter() - t)
            starts = server.executor.starts if server.executor else None
        finally:
            fresh.close()
            server.close()
        start_cost: dict[str, list[float]] = {"server": [], "fresh": []}
        for _ in range(max(3, n // 10)):
            for mode, costs in start_cost.items():
                t = time.perf_counter()
                with _create(backend, spec, mode) as box:
                    box.exec(["true"])
                costs.append(time.perf_counter() - t)
        m = {k: _median_ms(v) for k, v in samples.items()}
        # the 10th percentile: what an exec costs when the shared machine leaves it alone
        p10 = {k: statistics.quantiles(v, n=10)[0] * 1000 for k, v in samples.items()}
        out["rows"].append(
            {
                "backend": name,
                **{f"{k}_ms": round(v, 3) for k, v in m.items()},
                "executor_vs_plain": round(m["executor"] / m["plain"], 2),
                "fresh_vs_plain": round(m["fresh"] / m["plain"], 2),
                "fresh_vs_executor": round(m["fresh"] / m["executor"], 1),
                **{f"{k}_p10_ms": round(v, 3) for k, v in p10.items()},
                "executor_vs_plain_p10": round(p10["executor"] / p10["plain"], 2),
                "create_first_exec_close_ms": round(_median_ms(start_cost["server"]), 1),
                "create_first_exec_close_fresh_ms": round(_median_ms(start_cost["fresh"]), 1),
                "executor_starts": starts,
            }
        )
    out["load_after"] = round(os.getloadavg()[0], 2)
    return out


SECTIONS: dict[str, Callable[[int], dict]] = {
    "executor": bench_executor,
    "exec": bench_exec,
    "views": bench_views,
    "replay": bench_replay,
    "diagnose": bench_diagnose,
    "floor": bench_floor,
    "verifier": bench_verifier,
}


def _print(results: dict) -> None:
    m = results["machine"]
    print(f"machine: {m['cpus']} cpus, load {m['loadavg_1m_at_start']} at start")
    ex = results["sections"].get("exec", {})
    if "skipped" in ex:
        print(f"exec: skipped ({ex['skipped']})")
    for row in ex.get("commands", []):
        print(
            f"exec {row['command']!r:22} plain {row['plain_ms']:7.2f} ms   sandboxed "
            f"{row['sandboxed_ms']:7.2f} ms   +{row['overhead_ms']:.2f} ms   x{row['ratio']}"
        )
    if "create_close_ms" in ex:
        print(f"sandbox create+close: {ex['create_close_ms']:.2f} ms (median)")
    views = results["sections"].get("views", {})
    if "skipped" in views:
        print(f"views: skipped ({views['skipped']})")
    for row in views.get("rows", []):
        print(
            f"{row['variant']:28} create+close {row['create_close_ms']:7.2f} ms"
            f" (x{row['create_ratio_vs_mirror']})   exec true {row['exec_ms']:7.2f} ms"
            f" (x{row['exec_ratio_vs_mirror']})   limits active: {row['limits_active']}"
        )
    rep = results["sections"].get("replay", {})
    if "skipped" in rep:
        print(f"replay: skipped ({rep['skipped']})")
    for row in rep.get("rows", []):
        print(
            f"replay {row['trajectories']} trajectories ({rep['shell_calls']} shell calls), "
            f"{row['workers']} worker(s): {row['wall_s']:.2f} s, "
            f"{row['trajectories_per_s']:.2f} traj/s, median {row['median_replay_s']} s/replay, "
            f"{row['ok']} ok, {row['resolved']} resolved"
        )
    for i, p in enumerate(rep.get("pairs", [])):
        print(
            f"replay pair {i + 1}: 1 worker {p['w1']['wall_s']:.2f} s, 2 workers"
            f" {p['w2']['wall_s']:.2f} s, x{p['ratio']} (load {p['load'][0]} / {p['load'][1]};"
            f" parent CPU {p['w1']['parent_cpu_s_per_replay'] * 1000:.0f} ms per replay)"
        )
    if "speedup_2_vs_1" in rep:
        print(f"replay speedup, 2 workers vs 1: x{rep['speedup_2_vs_1']} (median of the pairs)")
    fl = results["sections"].get("floor", {})
    if "skipped" in fl:
        print(f"floor: skipped ({fl['skipped']})")
    elif fl:
        inside = ", ".join(f"{k} {v:.2f} ms" for k, v in fl["inside_sandbox_ms"].items())
        print(
            f"floor: host plain {fl['host_plain_ms']:.2f} ms, sandboxed exec "
            f"{fl['sandboxed_exec_ms']:.2f} ms; inside the sandbox: {inside} (load {fl['load']})"
        )
    exe = results["sections"].get("executor", {})
    if "skipped" in exe:
        print(f"executor: skipped ({exe['skipped']})")
    for row in exe.get("rows", []):
        print(
            f"executor {row['backend']:6} true: plain {row['plain_ms']:.2f} ms, per-exec sandbox "
            f"{row['fresh_ms']:.2f} ms (x{row['fresh_vs_plain']}), executor "
            f"{row['executor_ms']:.2f} ms (x{row['executor_vs_plain']}); create+first exec+close "
            f"{row['create_first_exec_close_ms']:.1f} ms (per-exec sandbox "
            f"{row['create_first_exec_close_fresh_ms']:.1f} ms); executor starts "
            f"{row['executor_starts']}"
        )
        print(
            f"executor {row['backend']:6} 10th percentile: plain {row['plain_p10_ms']:.2f} ms,"
            f" executor {row['executor_p10_ms']:.2f} ms (x{row['executor_vs_plain_p10']})"
        )
    if exe.get("rows"):
        print(f"executor load: {exe['load_before']} -> {exe['load_after']}")
    dia = results["sections"].get("diagnose", {})
    if "skipped" in dia:
        print(f"diagnose: skipped ({dia['skipped']})")
    for row in dia.get("rows", []):
        print(
            f"diagnose {row['trajectories']} trajectories ({row['replays']} replays), "
            f"{row['workers']} worker(s): {row['wall_s']:.1f} s, "
            f"{row['trajectories_per_s']:.2f} traj/s, {row['replays_per_s']:.2f} replays/s, "
            f"load {row['load_before']} -> {row['load_after']}"
        )
    if "speedup_2_vs_1" in dia:
        print(f"diagnose speedup, 2 workers vs 1: x{dia['speedup_2_vs_1']}")
    print_verifier(results["sections"].get("verifier", {}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50, help="samples per measurement")
    parser.add_argument("--only", choices=sorted(SECTIONS), help="run one section")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--diagnose-workers", default="1,2", help="replay worker counts for the diagnose section"
    )
    args = parser.parse_args(argv)
    global DIAGNOSE_WORKERS
    DIAGNOSE_WORKERS = tuple(int(x) for x in args.diagnose_workers.split(","))
    chosen = [args.only] if args.only else list(SECTIONS)
    results = {
        "format_version": FORMAT_VERSION,
        "producer": {"name": "bench/sandbox", "version": "0.1.0", "args": vars(args)},
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "loadavg_1m_at_start": round(os.getloadavg()[0], 2),
        },
        "sections": {name: SECTIONS[name](args.n) for name in chosen},
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        _print(results)


if __name__ == "__main__":
    main()
