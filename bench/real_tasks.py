"""bench/real_tasks: real task sets built and graded offline on docker, per cause.

    .venv/bin/python bench/real_tasks.py [--shared ../shared/data/tasks] [--set tb2,harbor,tb1]
        [--only TASK,...] [--out bench/out/real_tasks.jsonl] [--again] [--keep-images]
        [--max-run-s 1800] [--json] [--report-only] [--groups nothing,debian-pypi]

The sets: ``terminal-bench-2/`` (70 Terminal-Bench 2.0 tasks as their authors wrote them),
``harbor-examples/`` and ``tb1-adapters/`` under ``--shared`` (the checkout's ``../shared``).
Per task, one at a time (the machine is shared): build its image offline (``tasks.images``:
FROM onto the local Debian bases, run-time installs provisioned), read what the image cannot
serve, grade the oracle and a no-op in fresh sandboxes (``tasks.check.check_task``), note the
image's size above its base, then remove the image (``--keep-images`` keeps it) so the disk the
run holds stays one task's. A task's row is appended to ``--out`` as soon as it is done; a rerun
skips the tasks already there (``--again`` reruns them), so a long run resumes.

The report groups tasks by what their build fetches, as the TB2 set's INDEX.md says (nothing /
Debian+PyPI / Ubuntu's archive / other hosts; the Harbor examples and TB1 adapters are groups
of their own), and says per group how many grade right (oracle 1, no-op 0) and, for every other
task, why: the build failed offline (its last error line), the solution installs what no
registry here serves (apt's or pip's reason), the oracle scored 0 (the verifier's last lines),
its solution was killed (the task's timeout: on a loaded machine), the no-op scored 1, or a
sandbox fault. Then the disk: the bases, and the sum over task images of
what each adds above its base (what the whole set takes when every image is kept).

Every task of the sets is in the report: one not run (``--report-only``, or its group left out
by ``--groups``) is listed as not run with what the INDEX says its build fetches, never counted
as a 0. A table of causes closes the report (right, not run, build fails offline, downloads
from other hosts, cannot be served, oracle 0, no-op 1, sandbox fault).

``--max-run-s`` caps the agent's and the verifier's timeouts of each run (a task's own are up to
an hour; 0: the task's own).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = {"tb2": "terminal-bench-2", "harbor": "harbor-examples", "tb1": "tb1-adapters"}
GROUPS = {
    "nothing": "TB2: build fetches nothing (base + COPY)",
    "debian-pypi": "TB2: build needs Debian apt and/or PyPI",
    "ubuntu": "TB2: build needs Ubuntu's archive",
    "other": "TB2: build fetches from other hosts",
    "harbor": "Harbor examples",
    "tb1": "Terminal-Bench 1 adapters",
}


def index_groups(index: Path) -> dict[str, str]:
    """{task: group} from the TB2 INDEX.md table's "offline build" and fetch columns."""
    return {t: r["group"] for t, r in index_rows(index).items()}


def index_rows(index: Path) -> dict[str, dict]:
    """{task: {"group", "offline", "fetches"}} from the TB2 INDEX.md table: the group (see
    ``GROUPS``), its "offline build" cell and its "non-registry fetches at build" cell."""
    out = {}
    for line in index.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 6 or cells[0] in ("task", "---") or not re.fullmatch(r"[\w.-]+", cells[0]):
            continue
        offline = cells[4]
        if offline.startswith("yes (nothing"):
            group = "nothing"
        elif offline.startswith("yes"):
            group = "debian-pypi"
        elif "Ubuntu" in offline:
            group = "ubuntu"
        else:
            group = "other"
        out[cells[0]] = {"group": group, "offline": offline, "fetches": cells[3]}
    return out


def not_run_reason(info: dict | None) -> str:
    """Why a task not run would need more than this machine's registries, as the INDEX says."""
    if not info:
        return "not run"
    said = f"INDEX: offline build {info['offline']}"
    if info["fetches"] not in ("", "-"):
        said += f"; fetches at build: {info['fetches']}"
    return f"not run ({said})"


def image_size(docker, tag: str) -> int:
    out = docker.cli("image", "inspect", "--format", "{{.Size}}", tag, timeout_s=60, check=False)
    return int(out.strip() or 0)


def base_of(docker, tag: str) -> str | None:
    """The local base a task image was built on (the newest agentpost-base in its history)."""
    hist = docker.cli(
        "history", "--no-trunc", "--format", "{{.ID}}", tag, timeout_s=60, check=False
    )
    ids = [i for i in hist.split() if i.startswith("sha256:")]
    bases = docker.cli(
        "images", "--no-trunc", "--format", "{{.ID}} {{.Repository}}:{{.Tag}}",
        "--filter", "reference=agentpost-base-*", timeout_s=60, check=False,
    )  # fmt: skip
    by_id = {}
    for line in bases.splitlines():
        i, _, ref = line.partition(" ")
        by_id.setdefault(i, ref)
    return next((by_id[i] for i in ids if i in by_id), None)


def cause(row: dict, fetches: list[str] | None = None) -> str:
    """Why a task does not grade right, in one line (empty when it does). ``fetches``: the
    downloads from other hosts its scripts make (``sandbox.provision`` notes)."""
    if row.get("right"):
        return ""
    if row.get("not_run"):
        return row["not_run"]
    if row.get("build_error"):
        return "build fails offline: " + build_reason(row["build_error"])
    unserved = [u for u in row.get("unservable", []) if u["what"] != "note"]
    if row.get("oracle") != 1.0 and unserved:
        items = "; ".join(f"{u['what']} ({u['why'][-160:]})" for u in unserved[:4])
        return f"solution/tests install what cannot be served: {items}"
    errors = row.get("errors") or {}
    if fetches is None:
        fetches = [u["why"] for u in row.get("unservable", []) if "fetches from" in u["why"]]
    if row.get("oracle") != 1.0 and fetches:
        return "solution/tests download from other hosts: " + "; ".join(fetches[:3])
    if row.get("oracle") != 1.0 and row.get("oracle_killed"):
        return f"oracle: its solution was killed by the {row['oracle_killed']}"
    if row.get("oracle") != 1.0:
        said = row.get("oracle_output", "")
        said = f" (its solution said: ...{said[-200:]})" if said else ""
        return "oracle: " + _short(errors.get("oracle", f"reward {row.get('oracle')}")) + said
    if row.get("nop") != 0.0:
        return "no-op: " + _short(errors.get("nop", f"reward {row.get('nop')}"))
    return "?"


KINDS = (
    "right", "not run", "build fails offline", "cannot be served", "downloads from other hosts",
    "oracle killed", "oracle 0", "no-op 1", "sandbox fault",
)  # fmt: skip


def kind(row: dict, fetches: list[str] | None = None) -> str:
    """The row's line in the table of causes (one of ``KINDS``)."""
    why = cause(row, fetches)
    if not why:
        return "right"
    for prefix, k in (
        ("not run", "not run"),
        ("build fails offline", "build fails offline"),
        ("solution/tests install", "cannot be served"),
        ("solution/tests download", "downloads from other hosts"),
        ("oracle: its solution was killed", "oracle killed"),
    ):
        if why.startswith(prefix):
            return k
    errors = row.get("errors") or {}
    if row.get("oracle") != 1.0:
        return "sandbox fault" if row.get("oracle") is None and errors.get("oracle") else "oracle 0"
    return "sandbox fault" if row.get("nop") is None and errors.get("nop") else "no-op 1"


_ANSI = re.compile(r"\x1b?\[[0-9;]*m")
_TELLING = re.compile(
    r"Could not resolve host|Temporary failure resolving|has no installation candidate|"
    r"Unable to locate package|^E: |No matching distribution|returned a non-zero code"
)


def build_reason(text: str) -> str:
    """The telling lines of a failed build (docker's own noise and colours dropped)."""
    flat = _ANSI.sub("", str(text)).replace("\\n", "\n").replace(" | ", "\n")
    lines = [ln.strip() for ln in flat.splitlines()]
    telling = [ln for ln in lines if _TELLING.search(ln)]
    return _short(" | ".join(telling[-3:]) if telling else text, 400)


def _short(text: str, limit: int = 300) -> str:
    flat = " | ".join(ln.strip() for ln in str(text).splitlines() if ln.strip())
    return flat if len(flat) <= limit else "..." + flat[-limit:]


def run_task(task, group: str, docker, keep: bool, max_run_s: float) -> dict:
    from agentpost.tasks.check import check_task
    from agentpost.tasks.images import ensure_image, unservable

    row: dict = {"id": task.id, "group": group}
    t0 = time.monotonic()
    try:
        tag = ensure_image(task, docker)
    except Exception as e:  # the build's own reason, said in the report
        row["build_error"] = str(e)[-3000:]
        row["build_s"] = round(time.monotonic() - t0, 1)
        return row
    row["build_s"] = round(time.monotonic() - t0, 1)
    row["image"] = tag
    if tag:
        base = base_of(docker, tag)
        row["base"] = base
        row["added_bytes"] = image_size(docker, tag) - (image_size(docker, base) if base else 0)
    if max_run_s:
        task = replace(
            task,
            agent_timeout_s=min(task.agent_timeout_s, max_run_s),
            verifier_timeout_s=min(task.verifier_timeout_s, max_run_s),
        )
    t0 = time.monotonic()
    check = check_task(task, docker)
    row["check_s"] = round(time.monotonic() - t0, 1)
    row["oracle"], row["nop"] = check["oracle_reward"], check["nop_reward"]
    row["errors"] = {k: _short(v, 600) for k, v in (check.get("errors") or {}).items()}
    if check.get("oracle_killed"):
        row["oracle_killed"] = check["oracle_killed"]
    if check.get("oracle_output"):
        row["oracle_output"] = _short(check["oracle_output"], 600)
    row["unservable"] = unservable(task, docker)
    row["right"] = row["oracle"] == 1.0 and row["nop"] == 0.0
    if tag and not keep:
        docker.cli("rmi", "-f", tag, timeout_s=300, check=False)
        for svc in docker.cli("images", "--format", "{{.Repository}}:{{.Tag}}", "--filter",
                              f"reference={tag.split(':')[0]}-*", timeout_s=60).split():  # fmt: skip
            docker.cli("rmi", "-f", svc, timeout_s=300, check=False)
    return row


def report(rows: list[dict], bases: dict[str, int], fetches: dict[str, list[str]]) -> dict:
    groups: dict[str, dict] = {}
    causes = dict.fromkeys(KINDS, 0)
    for r in rows:
        g = groups.setdefault(
            r["group"], {"tasks": 0, "right": 0, "built": 0, "not_run": 0, "not_right": {}}
        )
        g["tasks"] += 1
        g["not_run"] += bool(r.get("not_run"))
        g["built"] += "build_error" not in r and not r.get("not_run")
        g["right"] += bool(r.get("right"))
        causes[kind(r, fetches.get(r["id"]))] += 1
        if not r.get("right"):
            g["not_right"][r["id"]] = cause(r, fetches.get(r["id"]))
    added = sum(r.get("added_bytes", 0) for r in rows)
    return {
        "groups": groups,
        "right": sum(bool(r.get("right")) for r in rows),
        "tasks": len(rows),
        "causes": causes,
        "disk": {"bases_bytes": sum(bases.values()), "bases": bases, "task_images_bytes": added},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "data" / "tasks"))
    ap.add_argument("--set", default="tb2,harbor,tb1")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "real_tasks.jsonl"))
    ap.add_argument("--again", action="store_true")
    ap.add_argument("--keep-images", action="store_true")
    ap.add_argument("--max-run-s", type=float, default=1800.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--report-only", action="store_true", help="print the rows done, run none")
    ap.add_argument("--groups", default="", help="run only these groups (the rest: not run)")
    args = ap.parse_args()

    from agentpost.sandbox.docker import DockerBackend
    from agentpost.tasks.images import task_needs
    from agentpost.tasks.loader import load_suite

    shared = Path(args.shared)
    if not shared.is_dir():
        sys.exit(f"no task sets at {shared} (the shared data sits beside the checkout)")
    docker = DockerBackend()
    if not docker.available():
        sys.exit("no docker daemon answers (bash scripts/dockerd.sh start)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if out.exists() and not args.again:
        for line in out.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["id"]] = r
    only = {t for t in args.only.split(",") if t}
    tb2_index = index_rows(shared / SETS["tb2"] / "INDEX.md")
    run_groups = {g for g in args.groups.split(",") if g}
    rows = []
    fetches: dict[str, list[str]] = {}  # from today's parse, also for rows of earlier runs
    for key in args.set.split(","):
        errors: list = []
        tasks = load_suite(shared / SETS[key], errors)
        for e in errors:
            print(f"SKIPPED (does not load) {e}", file=sys.stderr)
        for task in tasks:
            if only and task.id not in only:
                continue
            info = tb2_index.get(task.id) if key == "tb2" else None
            group = info["group"] if info else ("other" if key == "tb2" else key)
            notes = task_needs(task).notes
            fetches[task.id] = sorted({n for n in notes if "fetches from" in n})
            if task.id in done:
                rows.append(done[task.id])
                continue
            if args.report_only or (run_groups and group not in run_groups):
                rows.append({"id": task.id, "group": group, "not_run": not_run_reason(info)})
                continue
            print(f"[{len(rows) + 1}] {task.id} ({group}) ...", file=sys.stderr, flush=True)
            row = run_task(task, group, docker, args.keep_images, args.max_run_s)
            rows.append(row)
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            verdict = "right" if row.get("right") else cause(row, fetches[task.id])
            print(f"    {verdict}  (build {row.get('build_s')} s, check {row.get('check_s')} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
    bases = {}
    for line in docker.cli("images", "--format", "{{.Repository}}:{{.Tag}} {{.ID}}", "--filter",
                           "reference=agentpost-base-*:latest", timeout_s=60).splitlines():  # fmt: skip
        ref, _, _ = line.partition(" ")
        bases[ref] = image_size(docker, ref)
    doc = report(rows, bases, fetches)
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    for key, g in doc["groups"].items():
        print(f"{GROUPS.get(key, key):48} {g['right']:3} of {g['tasks']:3} grade right "
              f"({g['built']} built, {g['not_run']} not run)")  # fmt: skip
        for tid, why in sorted(g["not_right"].items()):
            print(f"    {tid:36} {why}")
    print(f"total: {doc['right']} of {doc['tasks']} grade right")
    print("causes: " + ", ".join(f"{k} {n}" for k, n in doc["causes"].items() if n))
    gb = 1 << 30
    print(f"disk: bases {doc['disk']['bases_bytes'] / gb:.1f} GiB (shared), task images add "
          f"{doc['disk']['task_images_bytes'] / gb:.1f} GiB in all")  # fmt: skip


if __name__ == "__main__":
    main()
