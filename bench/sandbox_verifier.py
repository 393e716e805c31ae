"""bench/sandbox section ``verifier``: what grading in the verifier's own namespace costs.

For a few bundled tasks, each sample prepares a fresh sandbox with the task's oracle applied
(not timed), then times one grading, alternating in one run between:

- ``in_place``: the grading before issue 26 (kept here only to be measured): fresh /tmp and
  home (the executor restarts), the cleanup of /tests and /logs/verifier, the link sweep (a
  shell loop), the tests copied in, ``test.sh`` run in the agent's own sandbox, the reward read;
- ``own_namespace``: ``tasks.evaluate.evaluate`` (no control: an oracle's verdict is clean), whose
  tests run in a second namespace (``verifier_sandbox``) with the link sweep, ``as-agent`` and a
  strict read of the reward.

It reports the median seconds per grading of each, their ratio (own / in place), the 10th
percentiles and the load average, for bubblewrap and docker (where a daemon answers). Both
must give reward 1.
"""

from __future__ import annotations

import os
import statistics
import time

TASKS = ("csv-to-json", "c-primes", "git-feature-branch")
_OLD_CLEAN = (
    "chmod -R u+rwX /tests /logs/verifier 2>/dev/null; "
    "find /tests -mindepth 1 -delete; rm -rf /logs/verifier; mkdir -p /logs/verifier; "
    '[ -z "$(ls -A /tests)" ] && [ -z "$(ls -A /logs/verifier)" ] && [ ! -L /logs/verifier ]'
)
_OLD_SWEEP = (
    "find {dirs} -xdev -type l -print0 2>/dev/null | while IFS= read -r -d '' l; do"
    ' case "$(readlink -m -- "$l")" in /tests|/tests/*|/logs|/logs/*) rm -f -- "$l";; esac;'
    " done; true"
)


def _in_place(task, box) -> float:
    """The pre-issue-26 grading, step for step; returns the reward."""
    from agentpost.tasks.evaluate import spec_for
    from agentpost.tasks.verifier import VERIFIER_ENV

    box.reset_private()
    dirs = " ".join(spec_for(task).writable_dirs)
    box.exec(_OLD_SWEEP.format(dirs=dirs), timeout_s=60)
    assert box.exec(_OLD_CLEAN, timeout_s=60).exit_code == 0
    box.put_dir(str(task.tests_dir), "/tests")
    box.exec("bash /tests/test.sh", cwd=task.workdir, timeout_s=task.verifier_timeout_s,
             env={**task.verifier_env, **VERIFIER_ENV})  # fmt: skip
    return float(box.get("/logs/verifier/reward.txt").decode().strip())


def _backends() -> dict:
    from agentpost.sandbox.registry import get_backend

    out = {}
    for name in ("bwrap", "docker"):
        b = get_backend(name)
        if b.available():
            out[name] = b
    return out


def bench_verifier(n: int) -> dict:
    from agentpost.tasks.evaluate import evaluate, prepare, run_script, spec_for
    from agentpost.tasks.loader import bundled_suite_path, load_task

    tasks = [load_task(bundled_suite_path() / t) for t in TASKS]
    rows = []
    for name, backend in _backends().items():
        samples: dict[str, list[float]] = {"in_place": [], "own_namespace": []}
        load_before = os.getloadavg()[0]
        rounds = max(1, n // len(tasks)) if name == "bwrap" else max(1, n // (3 * len(tasks)))
        for _ in range(rounds):
            for task in tasks:
                for mode in ("in_place", "own_namespace"):
                    with backend.create(spec_for(task, backend=backend)) as box:
                        prepare(task, box)
                        run_script(task, box, task.solution_script)
                        t = time.perf_counter()
                        if mode == "in_place":
                            reward = _in_place(task, box)
                        else:
                            reward = evaluate(task, box, control=False).reward
                        samples[mode].append(time.perf_counter() - t)
                        assert reward == 1.0, (name, task.id, mode, reward)
        med = {k: statistics.median(v) for k, v in samples.items()}
        p10 = {k: sorted(v)[len(v) // 10] for k, v in samples.items()}
        rows.append({
            "backend": name, "gradings": len(samples["in_place"]),
            "median_s": {k: round(v, 4) for k, v in med.items()},
            "p10_s": {k: round(v, 4) for k, v in p10.items()},
            "ratio_own_to_in_place": round(med["own_namespace"] / med["in_place"], 2),
            "load_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        })  # fmt: skip
    return {"tasks": list(TASKS), "rows": rows} if rows else {"skipped": "no sandbox backend"}


def print_verifier(sec: dict) -> None:
    if not sec:
        return
    if "skipped" in sec:
        print(f"verifier: skipped ({sec['skipped']})")
        return
    print(f"verifier: one grading of the oracle's state ({', '.join(sec['tasks'])})")
    for r in sec["rows"]:
        m = r["median_s"]
        print(
            f"  {r['backend']:6} in place {m['in_place'] * 1000:7.0f} ms   own namespace "
            f"{m['own_namespace'] * 1000:7.0f} ms   ratio {r['ratio_own_to_in_place']:.2f}x   "
            f"(n={r['gradings']} each, load {r['load_before_after']})"
        )
