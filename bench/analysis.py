"""`efficiency`, `summary` and `report` at the scale of an RL run, as ratios to a plain JSONL read.

Builds a synthetic run of ``--n`` trajectories (default 100,000) from the real samples under
``../shared/data/trajectories`` (imported here; ``tests/synthetic_run.write_run``: ``--models``
policies (13; 1 is one RL run), ``--rollouts`` per model and task (8), each rollout a real
trajectory with its own id, task, outcome and token counts scaled by one factor), then runs,
one after the other in child processes on the same file:

  read        a plain JSONL read: every line ``orjson.loads``-ed and dropped (the floor)
  efficiency  ``agentpost efficiency RUN/trajectories.jsonl -o eff.json`` (default bootstrap)
  summary     ``agentpost summary RUN --json``
  report      ``agentpost report RUN -o OUT/report.html`` (the viewer's data in OUT/report_data)

and prints for each: wall seconds, CPU seconds (user + system: a busy shared machine inflates
wall time, less so CPU), peak resident memory (the child's ru_maxrss), the same per 10,000
trajectories, the ratios to ``read``, and the load average as it ended. Expected before
measuring: every command streams, so peak memory grows with the rows kept (a few kB per
trajectory), not with the trajectories' size; time is dominated by parsing and validating
each trajectory and classifying its calls. With ``--chromium`` it then opens the report in
headless Chromium (a fresh profile, offline) three times and prints the seconds until the
viewer lists the trajectories, and until a deep link opens the last trajectory (its shard read
on demand). The load average is printed beside.

Run: ``.venv/bin/python bench/analysis.py [--n 100000] [--models 13] [--rollouts 8] [--chromium]
[--keep DIR]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "report")]
SHARED = ROOT.parent / "shared" / "data" / "trajectories"
CLI = [sys.executable, "-c", "import sys; from agentpost.cli import main; sys.argv[0] = 'agentpost'; main()"]  # fmt: skip
READ = [sys.executable, "-c", "import sys, orjson\nfor line in open(sys.argv[1], 'rb'):\n    orjson.loads(line)\n"]  # fmt: skip


def templates() -> list[dict]:
    """The shared real samples, imported, as canonical dicts."""
    import orjson

    from agentpost.trajectory.importing import import_paths
    from agentpost.trajectory.io import dumps

    if not SHARED.is_dir():
        sys.exit(f"bench/analysis.py: {SHARED} is absent (the real samples beside the checkout)")
    return [orjson.loads(dumps(t)) for t in import_paths([SHARED]).trajectories]


def measure(cmd: list[str], stdout=subprocess.DEVNULL) -> dict:
    """Wall and CPU seconds and peak RSS (MB) of one child process."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd[3:])}\n{err[-2000:]}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "mb": usage.ru_maxrss / 1024,
        "load": os.getloadavg()[0],
    }  # the 1-minute load average as the command ends


def chromium_times(report: Path, last_id: str, rounds: int = 3) -> tuple[list[float], list[float]]:
    from report_chromium import Browser, chromium_path

    binary = chromium_path()
    if binary is None:
        sys.exit("bench/analysis.py --chromium: chromium is not installed")
    listed, opened = [], []
    for _ in range(rounds):
        with Browser(binary) as b:  # a fresh profile each round: nothing cached
            listed.append(b.open(report, ready="document.getElementById('tv-count').textContent"))
        with Browser(binary) as b:
            opened.append(b.open(report, fragment=f"traj={last_id}",
                                 ready="document.getElementById('tv-detail').dataset.state === 'open'"))  # fmt: skip
    return listed, opened


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="trajectories in the synthetic run")
    ap.add_argument("--models", type=int, default=13, help="policies (1: one RL run)")
    ap.add_argument("--rollouts", type=int, default=8, help="rollouts per model and task")
    ap.add_argument("--chromium", action="store_true", help="also time the report in Chromium")
    ap.add_argument("--keep", type=Path, help="build the run here and keep it (else a temp dir)")
    args = ap.parse_args()
    from synthetic_run import write_run

    work = args.keep or Path(tempfile.mkdtemp(prefix="agentpost-bench-analysis-"))
    run, out = work / "run", work / "out"
    run.mkdir(parents=True, exist_ok=True)
    out.mkdir(exist_ok=True)
    data = run / "trajectories.jsonl"
    try:
        t0 = time.monotonic()
        tpl = templates()
        write_run(data, args.n, tpl, models=args.models, rollouts=args.rollouts)
        size = data.stat().st_size
        print(f"run: {args.n} trajectories ({args.models} models, {args.rollouts} rollouts per "
              f"model and task) from {len(tpl)} real samples, {size / 1e6:.0f} MB "
              f"({size / args.n / 1e3:.1f} kB each), built in {time.monotonic() - t0:.0f} s; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
        rows = {
            "read": measure([*READ, str(data)]),
            "efficiency": measure([*CLI, "efficiency", str(data), "-o", str(work / "eff.json")]),
            "summary": measure([*CLI, "summary", str(run), "--json"]),
            "report": measure([*CLI, "report", str(run), "-o", str(out / "report.html")]),
        }
        base = rows["read"]
        per = 10_000 / args.n
        print(f"\n{'command':<11} {'wall s':>8} {'CPU s':>8} {'peak MB':>8} | per 10k: "
              f"{'wall s':>7} {'CPU s':>7} {'MB':>7} | x read: {'wall':>6} {'CPU':>6} {'peak':>6} | load")  # fmt: skip
        for name, r in rows.items():
            print(f"{name:<11} {r['wall']:8.1f} {r['cpu']:8.1f} {r['mb']:8.0f} | {'':9}"
                  f"{r['wall'] * per:7.2f} {r['cpu'] * per:7.2f} {r['mb'] * per:7.1f} | {'':8}"
                  f"{r['wall'] / base['wall']:6.1f} {r['cpu'] / base['cpu']:6.1f} "
                  f"{r['mb'] / base['mb']:6.1f} | {r['load']:4.1f}")  # fmt: skip
        page = (out / "report.html").stat().st_size
        shards = list((out / "report_data").glob("*.js"))
        print(f"\nreport: page {page / 1e6:.2f} MB; data folder {len(shards)} files, "
              f"{sum(p.stat().st_size for p in shards) / 1e6:.0f} MB "
              f"(index {(out / 'report_data' / 'index.js').stat().st_size / 1e6:.1f} MB)")  # fmt: skip
        if args.chromium:
            with open(data, "rb") as f:
                f.seek(max(0, size - 200_000))
                last = f.read().splitlines()[-1]
            import orjson

            listed, opened = chromium_times(out / "report.html", orjson.loads(last)["id"])
            print(f"chromium: lists all {args.n} trajectories in "
                  f"{statistics.median(listed):.2f} s (median of {len(listed)}: "
                  f"{', '.join(f'{x:.2f}' for x in listed)}); opens the last one by its deep "
                  f"link in {statistics.median(opened):.2f} s "
                  f"({', '.join(f'{x:.2f}' for x in opened)})")  # fmt: skip
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
