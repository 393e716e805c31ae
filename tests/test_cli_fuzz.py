"""Every command against bad input: no traceback, no hang, bounded memory, a one-line error.

Each command's file (or directory) argument gets empty, binary, truncated, deeply nested,
huge-line, wrong-typed, huge-number and non-UTF-8 input, a directory, a FIFO, a symlink loop, a
missing path and ``/dev/zero``; outputs go to unwritable places; duration, URL and count flags get
nan, inf, 1e308 and malformed values. The cases run in-process through ``agentpost.cli.main``
(the real entry point, with its error handling) inside one worker subprocess that has an address
space limit, so a memory blow-up is a ``MemoryError`` reported as a failure, not a machine out of
memory; each case has an alarm, so a hang is reported too.

Run by hand to see every case: ``python tests/test_cli_fuzz.py`` prints the table.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

CASE_S = 20  # an alarm per case: past it the case counts as a hang
MEMORY_LIMIT = 6 << 30  # the worker's address space
RSS_GROWTH_MB = 1024  # peak RSS may grow at most this much in one case
# Commands whose bad input (and bad flag values) must give a non-zero exit, not only no crash;
# others (e.g. `efficiency` on an empty file, `report` on any folder) may accept some of it.
MUST_FAIL = {"stats {}", "show {}", "import {}", "hero advantages", "scvd metrics", "tasks list",
             "tasks check", "replay {}", "import -o", "efficiency -o", "report -o", "run -o",
             "demo -o",
             "diagnose -o", "security -o", "run -", "sandbox exec --", "replay --",
             "security grade"}  # fmt: skip

NESTED = 100_000
JSON_INPUTS: dict[str, bytes] = {
    "empty": b"",
    "binary": bytes(range(256)) * 64,
    "truncated": b'{"format": "agentpost.trajectory/1", "id": "t", "turns": [{"ind',
    "nested_array": b"[" * NESTED + b"]" * NESTED,
    "nested_object": b'{"a":' * NESTED + b"1" + b"}" * NESTED,
    "huge_line": b'{"id": "' + b"a" * (8 << 20),  # 8 MiB, no newline, never closed
    "wrong_type": b'{"format": "agentpost.trajectory/1", "id": 5, "turns": "x"}\n',
    "list_line": b"[1, 2, 3]\n[4]\n",
    "string_doc": b'"just a string"\n',
    "big_int": b'{"format": "agentpost.trajectory/1", "id": "t", "turns": [{"index": 0, '
    b'"usage": {"input_tokens": 1' + b"0" * 400 + b"}}]}\n",
    "groups_wrong": b'{"groups": [{"rewards": "x", "tokens": [1e400]}]}',
    "non_utf8": b"\xff\xfe\xfa\xc3\x28" * 2000 + b"\n",
}
TOML_INPUTS: dict[str, bytes] = {
    "toml_binary": bytes(range(256)) * 16,
    "toml_nested": b"a = " + b"[" * NESTED + b"]" * NESTED + b"\n",
    "toml_inline_nested": b"a = " + b"{b = " * 5000 + b"1" + b"}" * 5000 + b"\n",
    "toml_wrong_type": b'version = 5\n[agent]\ntimeout_sec = "soon"\n[verifier]\ntimeout_sec = 1e400\n',
    "toml_non_utf8": b'instruction = "\xff\xfe"\n',
}


def _inputs(root: Path) -> dict[str, str]:
    """Name -> path of every bad input, made under ``root``."""
    paths = {}
    for name, data in JSON_INPUTS.items():
        p = root / f"{name}.jsonl"
        p.write_bytes(data)
        paths[name] = str(p)
    for name, data in TOML_INPUTS.items():  # a task directory whose task.toml is bad
        d = root / name
        d.mkdir()
        (d / "task.toml").write_bytes(data)
        (d / "instruction.md").write_text("Do it.\n")
        paths[name] = str(d)
    (root / "toml_fifo").mkdir()  # a task.toml that is a FIFO: reading it would block
    os.mkfifo(root / "toml_fifo" / "task.toml")
    (root / "toml_fifo" / "instruction.md").write_text("Do it.\n")
    paths["toml_fifo"] = str(root / "toml_fifo")
    (root / "empty_dir").mkdir()
    paths["directory"] = str(root / "empty_dir")
    os.mkfifo(root / "fifo.jsonl")
    paths["fifo"] = str(root / "fifo.jsonl")
    os.symlink(root / "loop_b.jsonl", root / "loop_a.jsonl")
    os.symlink(root / "loop_a.jsonl", root / "loop_b.jsonl")
    paths["symlink_loop"] = str(root / "loop_a.jsonl")
    paths["missing"] = str(root / "no-such-file.jsonl")
    (root / "plain").write_text("x")
    paths["through_a_file"] = str(root / "plain" / "x.jsonl")  # ENOTDIR on open
    unreadable = root / "unreadable.jsonl"  # root reads it anyway; others get EACCES
    unreadable.write_bytes(JSON_INPUTS["wrong_type"])
    unreadable.chmod(0)
    paths["unreadable"] = str(unreadable)
    paths["dev_zero"] = "/dev/zero"
    return paths


def _unwritable(root: Path) -> dict[str, str]:
    """Output paths that cannot be written. Never a real device: a writer that replaced its
    target atomically would, as root, put a plain file in place of /dev/full (it happened)."""
    (root / "a-file").write_text("x")
    os.mkfifo(root / "out-fifo")
    return {
        "under_a_file": str(root / "a-file" / "out"),
        "in_proc": "/proc/agentpost-fuzz/out",
        "a_fifo": str(root / "out-fifo"),
    }


def _cases(root: Path) -> list[tuple[str, list[str]]]:
    """(label, argv) for every command and bad value."""
    bad = _inputs(root)
    out = str(root / "out")
    good = str(root / "good.jsonl")
    _good_trajectory(Path(good))
    task = str(_bundled_task())
    file_slots = [
        ["import", "{}", "-o", out], ["stats", "{}"], ["show", "{}"],
        ["replay", "{}", "--task", task], ["efficiency", "{}"], ["efficiency", "{}", "--json"],
        ["diagnose", "{}", "-o", out], ["report", "{}", "--out", out + ".html"],
        ["hero", "advantages", "{}"], ["scvd", "metrics", "{}"], ["scvd", "calibrate", "{}", "{}"],
        ["security", "attribute", "{}"], ["security", "metrics", "{}"],
        ["security", "annotate", "{}", "--out", out],
    ]  # fmt: skip
    dir_slots = [
        ["tasks", "list", "{}"], ["tasks", "check", "{}"], ["security", "check", "{}"],
        ["replay", good, "--task", "{}"], ["run", "--suite", "{}", "--policy", "careful", "-o", out],
        ["sandbox", "exec", "--workdir", "{}", "--", "true"], ["report", "{}"],
        ["security", "hint", "{}"], ["security", "grade", "{}", good],
    ]  # fmt: skip
    cases = []
    for slot in file_slots + dir_slots:
        for name, path in bad.items():
            if slot in dir_slots or not name.startswith("toml_"):
                cases.append(
                    (f"{' '.join(slot[:2])} <{name}>", [a.replace("{}", path) for a in slot])
                )
    for name, path in _unwritable(root).items():
        for slot in (["import", good, "-o", "{}"], ["efficiency", good, "--out", "{}"],
                     ["report", str(root), "--out", "{}"],
                     ["run", "--policy", "careful", "--task", "csv-to-json", "-o", "{}"],
                     ["diagnose", good, "-o", "{}"], ["security", "annotate", good, "--out", "{}"],
                     ["demo", "--out", "{}"], ["security", "demo", "--out", "{}"]):  # fmt: skip
            cases.append((f"{slot[0]} -o <{name}>", [a.replace("{}", path) for a in slot]))
    (root / "fifo-run").mkdir()  # a run folder whose trajectories.jsonl is a FIFO
    os.mkfifo(root / "fifo-run" / "trajectories.jsonl")
    cases.append(
        (
            "run -o <fifo trajectories>",
            ["run", "--policy", "careful", "--task", "csv-to-json", "-o", str(root / "fifo-run")],
        )
    )
    run = ["run", "--policy", "careful", "--task", "csv-to-json", "-o", out]
    model = ["run", "--model", "m", "--task", "csv-to-json", "-o", out]
    for value in ("nan", "inf", "-inf", "1e308", "0", "-5", "x"):
        cases.append((f"run --timeout {value}", [*run, "--timeout", value]))
        cases.append((f"sandbox exec --timeout {value}", ["sandbox", "exec", "--timeout", value, "--", "true"]))  # fmt: skip
        cases.append((f"replay --call-timeout {value}", ["replay", good, "--task", task, "--call-timeout", value]))  # fmt: skip
        cases.append((f"security grade --timeout {value}", ["security", "grade", task, good, "--timeout", value]))  # fmt: skip
    for url in ("http://127.0.0.1:PORTX", "http://[::1", "ftp://x/v1", "::::", "http://"):
        cases.append((f"run --base-url {url}", [*model, "--base-url", url]))
    for flag, value in (("-G", str(10**20)), ("--workers", str(10**20)), ("--step-limit", str(10**400)),
                        ("-G", "1e400"), ("--max-tokens", "-1"), ("--token-budget", "nan")):  # fmt: skip
        cases.append((f"run {flag} {value[:12]}", [*run, flag, value]))
    return cases


def _good_trajectory(path: Path) -> None:
    from agentpost.trajectory.io import write_jsonl
    from agentpost.trajectory.model import Producer, Trajectory

    producer = Producer(name="tests.fuzz", version="0", args={})
    write_jsonl(path, [Trajectory(id="good", task_id="csv-to-json", turns=[], producer=producer)])


def _bundled_task() -> Path:
    from agentpost.tasks.loader import bundled_suite_path

    return bundled_suite_path("terminal") / "csv-to-json"


class _Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise _Hang


def _one(argv: list[str]) -> dict:
    from agentpost.cli import main

    err, out = io.StringIO(), io.StringIO()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, tb = None, None
    t0 = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, CASE_S)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            main(argv)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except _Hang:
        tb = f"hang: no answer within {CASE_S}s"
    except BaseException:  # a traceback the user would see
        tb = traceback.format_exc(limit=-4)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) // 1024
    return {"code": code, "traceback": tb, "seconds": round(time.monotonic() - t0, 2),
            "rss_growth_mb": growth, "stderr": err.getvalue()[-2000:]}  # fmt: skip


def worker(root: str, report: str) -> None:
    signal.signal(signal.SIGALRM, _alarm)
    results = []
    for label, argv in _cases(Path(root)):
        results.append({"label": label, "argv": argv[:8], **_one(argv)})
        Path(report).write_text(json.dumps(results))  # what ran so far, if the worker dies


def _problems(r: dict) -> list[str]:
    found = []
    if r["traceback"]:
        found.append(r["traceback"].strip().splitlines()[-1][:300])
    if r["seconds"] > CASE_S:
        found.append(f"took {r['seconds']}s")
    if r["rss_growth_mb"] > RSS_GROWTH_MB:
        found.append(f"peak RSS grew {r['rss_growth_mb']} MiB")
    if r["code"] not in (None, 0) and "Traceback" in r["stderr"]:
        found.append("a traceback on stderr")
    usage = "Usage:" in r["stderr"] and "Invalid value" in r["stderr"]  # click names the flag
    if r["code"] == 2 and r["stderr"].strip() and not usage:  # typed errors: exactly one line
        lines = [x for x in r["stderr"].strip().splitlines() if x.startswith("error:")]
        if len(lines) != 1:
            found.append(f"not one error line: {r['stderr'].strip()[:200]!r}")
    if r["code"] == 0 and any(r["label"].startswith(m) for m in MUST_FAIL):
        found.append("bad input accepted (exit 0)")
    return found


def _run_worker(root: Path) -> list[dict]:
    report = root / "report.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1] / "src"), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))  # noqa: E731
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", str(root / "inputs"), str(report)],
        capture_output=True, text=True, timeout=600, env=env, preexec_fn=limit,
    )  # fmt: skip
    results = json.loads(report.read_text()) if report.exists() else []
    assert proc.returncode == 0, f"worker died after {len(results)} cases: {proc.stderr[-3000:]}"
    return results


def test_no_command_gives_a_traceback_a_hang_or_unbounded_memory_on_bad_input(tmp_path) -> None:
    (tmp_path / "inputs").mkdir()
    results = _run_worker(tmp_path)
    assert len(results) > 300
    bad = [(r["label"], p) for r in results for p in _problems(r)]
    assert not bad, f"{len(bad)} problems:\n" + "\n".join(f"{lab}: {p}" for lab, p in bad)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], sys.argv[3])
    else:
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="agentpost-fuzz-"))
        (tmp / "inputs").mkdir()
        try:
            res = _run_worker(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for r in res:
            line = "; ".join(_problems(r)) or "ok"
            print(f"{r['code']!s:>4} {r['seconds']:6.2f}s {r['label']:<45} {line}")
        print(f"{sum(bool(_problems(r)) for r in res)} of {len(res)} cases have problems")
