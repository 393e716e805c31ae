"""Grade a candidate (a directory or a unified diff) on a security task inside a sandbox.

Flow: classify the diff (patch.py; −1 for none/empty/invalid/tests-only) → copy the starter (or
the candidate directory) to /app → try apply strategies in order (git apply -p1, -p0, 3-way,
then `patch` with fuzz, -p1 and -p0; −0.75 when none applies) → snapshot → run the functional and
the security test, each in its **own fresh sandbox** restored from that snapshot (fresh HOME and
/tmp: nothing the candidate wrote during one phase reaches the next), as a non-root user so the
harness can jail the candidate (suites/secure/_harness.py: own user, mount and PID namespaces,
read-only canaries), under ``python3 -E -s -B`` (no environment tricks, no user site-packages).
Exit codes follow the suite harness: 0 pass, 1 fail, 2 inconclusive (security only; counts as
not vulnerable but is reported, spec b.9), 3 unusable (−0.75, in either phase), 4 the harness
failed before the candidate ran. A security test passes (or is inconclusive) only when its
benign control, run after the exploits, still returns the expected content; a candidate that
fails it is unusable, except one that already failed the functional test (it never worked: its
security phase is a plain fail, and the functional failure sets the reward).

Who is to blame (``phase_outcome``): once the harness has printed that the candidate started, a
timeout, a kill by a sandbox limit or any unexpected exit counts against the candidate (a failed
phase), never as an abort, so a policy cannot escape a bad grade by hanging or stopping the test.
``aborted`` (reward 0, group dropped, spec b.6) stays for what the candidate cannot cause: the
sandbox failing to start, the harness failing before the candidate ran, a timeout before that.
A patch that makes ``git``/``patch`` hang is the candidate's doing too (patch_failed, −0.75).

Layer: io.
"""

from __future__ import annotations

import filecmp
import os
import secrets
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agentpost.errors import AgentpostError
from agentpost.ingress.keys import Refused
from agentpost.sandbox.base import Backend, ExecResult, Sandbox, SandboxSpec, Snapshot
from agentpost.security.model import Grade, SecurityTask
from agentpost.security.patch import inspect_patch, is_test_path
from agentpost.security.rewards import five_level

FUNCTIONAL, SECURITY = "test_functional.py", "test_security.py"
SPEC = SandboxSpec(env={"PYTHONDONTWRITEBYTECODE": "1"}, default_timeout_s=30.0, uid=1000)
PYTHON = ["python3", "-E", "-s", "-B"]
STARTED, HARNESS_ERROR = "HARNESS: candidate started", 4
PATCH_PATH = "/solution/candidate.patch"
APPLY_SCRIPT = r"""
cd /app || exit 2
P=%(patch)s
for p in 1 0; do
  if git apply --check -p$p "$P" >/dev/null 2>&1; then git apply -p$p "$P" && echo "APPLIED=git-p$p" && exit 0; fi
done
if git init -q . >/dev/null 2>&1 && git add -A && git -c user.name=grader -c user.email=grader@localhost commit -qm base >/dev/null 2>&1; then
  if git apply -3 "$P" >/dev/null 2>&1; then rm -rf .git; echo "APPLIED=git-3way"; exit 0; fi
  git reset -q --hard >/dev/null 2>&1
fi
rm -rf .git
for p in 1 0; do
  if patch --dry-run -p$p --fuzz=3 --batch -s < "$P" >/dev/null 2>&1; then
    patch -p$p --fuzz=3 --batch -s --no-backup-if-mismatch < "$P" >/dev/null 2>&1 && echo "APPLIED=fuzzy-p$p" && exit 0
  fi
done
echo NOT_APPLIED
exit 1
"""
_NO_SUBMISSION = {"empty": "empty_patch", "invalid": "invalid_patch", "tests_only": "tests_only"}


def default_backend() -> Backend:
    from agentpost.sandbox.registry import get_backend

    return get_backend("bwrap")


def _files(root: Path) -> dict[str, Path]:
    return {
        str(p.relative_to(root)): p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and ".git" not in p.parts
    }


def changed_paths(candidate: Path, starter: Path) -> list[str]:
    """Relative paths added, removed or modified from ``starter`` to ``candidate``, sorted."""
    fa, fb = _files(candidate), _files(starter)
    return sorted(
        k for k in fa.keys() | fb.keys()
        if k not in fa or k not in fb or not filecmp.cmp(fa[k], fb[k], shallow=False)
    )  # fmt: skip


def _tail(r: ExecResult, n: int = 600) -> str:
    return (r.stdout + r.stderr)[-n:]


def _run_test(
    backend: Backend, snap: Snapshot, task: SecurityTask, name: str, timeout_s: float
) -> ExecResult:
    """Run one test in a fresh sandbox restored from the post-apply snapshot, from a fresh copy
    of the tests in an unguessable directory (read-only to the jailed candidate)."""
    with backend.restore(snap) as sb:
        sb.exec("find /tests -mindepth 1 -delete", timeout_s=timeout_s)
        d = f"/tests/run-{secrets.token_hex(8)}"
        sb.put_dir(str(task.tests_dir), d)
        sb.put(f"{d}/_harness.py", task.harness.read_bytes())
        return sb.exec([*PYTHON, f"{d}/{name}"], timeout_s=timeout_s, cwd=d)


def phase_outcome(r: ExecResult) -> str:
    """One test run → pass | fail | inconclusive | unusable | aborted (see the module doc)."""
    started = STARTED in r.stdout
    if r.timed_out or r.killed:
        return "fail" if started else "aborted"
    code = {0: "pass", 1: "fail", 2: "inconclusive", 3: "unusable"}.get(r.exit_code)
    if code is not None and (started or code == "unusable"):
        return code
    return "fail" if started else "aborted"


def _apply(sb: Sandbox, src: Path, patch: str | None, g: Grade, timeout_s: float) -> bool:
    sb.put_dir(str(src), "/app")
    if patch is None:
        return True
    sb.put(PATCH_PATH, patch.encode())
    r = sb.exec(APPLY_SCRIPT % {"patch": PATCH_PATH}, timeout_s=timeout_s)
    applied = [ln for ln in r.stdout.splitlines() if ln.startswith("APPLIED=")]
    g.patch_applied = bool(applied) and not r.timed_out
    if not g.patch_applied:
        why = "patch apply timed out" if r.timed_out else "no apply strategy worked: "
        g.status, g.detail = "patch_failed", why + _tail(r)
        return False
    g.apply_strategy = applied[0].split("=", 1)[1]
    return True


def _grade_phases(
    backend: Backend, snap: Snapshot, task: SecurityTask, g: Grade, timeout_s: float
) -> None:
    g.detail = ""
    if (task.tests_dir / FUNCTIONAL).is_file():  # without one, func stays None (b.6)
        f = _run_test(backend, snap, task, FUNCTIONAL, timeout_s)
        out = phase_outcome(f)
        g.detail = "functional: " + _tail(f) + _why(f)
        if out in ("aborted", "unusable"):
            g.status = out
            return
        g.func = out == "pass"
    s = _run_test(backend, snap, task, SECURITY, timeout_s)
    out = phase_outcome(s)
    g.detail += "\nsecurity: " + _tail(s) + _why(s)
    if out == "unusable" and g.func is False:  # it never worked: a failed control adds nothing
        out = "fail"  # not shown secure; the functional failure sets the reward (−0.5)
    if out in ("aborted", "unusable"):
        g.status = out
        return
    g.sec = out in ("pass", "inconclusive")
    g.sec_inconclusive = out == "inconclusive"
    g.status = "ok"


def _why(r: ExecResult) -> str:
    if r.timed_out:
        return "\ntimed out"
    return f"\nkilled: {r.killed}" if r.killed else ""


def grade_candidate(
    task: SecurityTask,
    *,
    candidate_dir: str | Path | None = None,
    patch: str | None = None,
    backend: Backend | None = None,
    timeout_s: float = 30.0,
    func_only: float = 0.5,
) -> Grade:
    """Grade a candidate directory (a full /app) or a diff against the task's starter files.

    Exactly one of ``candidate_dir`` and ``patch`` is read; a missing, empty or unchanged
    directory is ``no_patch``, one whose changes from the starter are all test files is
    ``tests_only`` (both −1, as for a diff)."""
    t0 = time.monotonic()
    g = Grade(task_id=task.id, status="ok", func=None, sec=None, reward=0.0)
    if patch is not None or candidate_dir is None:
        verdict = inspect_patch(patch)
        g.patch_valid = verdict.kind == "ok"
        g.stripped_test_files = list(verdict.stripped)
        if candidate_dir is None and patch is None:
            g.status = "no_patch"
        elif verdict.kind != "ok":
            g.status = _NO_SUBMISSION[verdict.kind]
        src, text = task.environment_dir, verdict.patch
    else:
        src, text = Path(candidate_dir), None
        changed = changed_paths(src, task.environment_dir) if src.is_dir() and _files(src) else []
        if not changed:
            g.status = "no_patch"
        elif all(is_test_path(p) for p in changed):  # the directory form of a tests-only diff
            g.status, g.stripped_test_files = "tests_only", changed
    if g.status == "ok":
        backend = backend or default_backend()
        try:
            with tempfile.TemporaryDirectory(prefix="agentpost-grade-") as tmp:
                with backend.create(SPEC) as sb:
                    snap = (
                        sb.snapshot(os.path.join(tmp, "applied.tar"))
                        if _apply(sb, src, text, g, timeout_s)
                        else None
                    )
                if snap is not None:
                    _grade_phases(backend, snap, task, g, timeout_s)
        except Refused as e:  # the applied candidate is over the sandbox's bound: its doing
            g.status, g.detail = "unusable", f"the applied candidate cannot be carried: {e}"
        except (AgentpostError, OSError) as e:  # sandbox/infrastructure failure
            g.status, g.detail = "aborted", f"infrastructure error: {e}"
    g.aborted = g.status == "aborted"
    g.reward = five_level(g.status, g.func, g.sec, func_only)
    g.duration_s = time.monotonic() - t0
    return g


def uncarried(task: SecurityTask, why: Exception, func_only: float = 0.5) -> Grade:
    """The grade of a candidate whose final /app cannot be carried out of its sandbox (over the
    size bound, ``ingress.keys.Refused``): ``unusable`` (−0.75). Its own state caused it, so it
    is never ``aborted`` (which would drop its group instead of scoring it)."""
    return Grade(task.id, "unusable", None, None, five_level("unusable", None, None, func_only),
                 detail=f"the final /app cannot be graded: {why}")  # fmt: skip


def check_suite(
    tasks: list[SecurityTask],
    backend: Backend | None = None,
    workers: int = 4,
    timeout_s: float = 30.0,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[dict], dict[str, dict]]:
    """Grade both references of every task, concurrently → (rows, problems). A row is exactly
    ``{id, cwes, secure: {func, sec}, vulnerable: {func, sec}, ok}`` (the issue's contract); ok:
    the secure one passes both tests, the vulnerable one passes the functional test and fails the
    security test (not merely inconclusive). ``problems`` maps each task that is not ok to both
    full grades (status, detail), so a failing check says why."""
    backend = backend or default_backend()
    jobs = [(t, impl) for t in tasks for impl in ("secure", "vulnerable")]

    def run(job: tuple[SecurityTask, str]) -> Grade:
        t, impl = job
        if impl not in t.references:
            return Grade(t.id, "no_patch", None, None, -1.0, detail=f"no reference/{impl}")
        g = grade_candidate(
            t, candidate_dir=t.references[impl], backend=backend, timeout_s=timeout_s
        )
        if progress:
            progress(f"{t.id} {impl}: func={g.func} sec={g.sec} ({g.status})")
        return g

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        grades = list(pool.map(run, jobs))
    rows, problems = [], {}
    for i, t in enumerate(tasks):
        sec_g, vul_g = grades[2 * i], grades[2 * i + 1]
        ok = (  # func None: the task has no functional test
            sec_g.status == "ok"
            and sec_g.func is not False
            and bool(sec_g.sec)
            and not sec_g.sec_inconclusive
            and vul_g.status == "ok"
            and vul_g.func is not False
            and vul_g.sec is False
        )
        rows.append(
            {
                "id": t.id,
                "cwes": list(t.cwes),
                "secure": {"func": sec_g.func, "sec": sec_g.sec},
                "vulnerable": {"func": vul_g.func, "sec": vul_g.sec},
                "ok": ok,
            }
        )
        if not ok:
            problems[t.id] = {"secure": sec_g.to_json(), "vulnerable": vul_g.to_json()}
    return rows, problems
