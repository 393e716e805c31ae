"""Import throughput as a ratio to plain ``orjson.loads`` of the same bytes, in one run.

Builds a corpus (default 300 MB) in a temp dir by replicating the real samples under
``../shared/data/trajectories`` beside the checkout (each copy gets its own file-name prefix and, where the id lives
in the content, an id prefix of the same byte length class), then times, over the same files:

  loads   ``orjson.loads`` of every document (every line for JSONL), bytes already in memory
  import  ``import_file`` per file: read, detect, parse, convert to canonical trajectories
  +dump   import plus the canonical JSONL serialisation (what ``agentpost import`` writes)

and prints MB/s and the ratios loads_time / import_time. The three are timed file by file in
one interleaved pass (so a busy shared machine slows both sides alike), under the same GC pause
``import_paths`` uses; the loads/import ratio is also given in this thread's CPU time, which a
busy machine disturbs less than wall time. ``--profile`` adds a cProfile of the import pass. ``--workers N`` adds
the wall-clock time of ``iter_import(..., workers=N)`` over the whole corpus (a separate
number: N processes against one ``orjson.loads`` thread is no like-for-like ratio).
``--phases`` splits one more pass over the same files into import's steps (read, detect,
parse, convert, freeing the parsed data, freeing the trajectories), each in thread CPU time as
a multiple of ``orjson.loads`` of the same bytes, the timer's own cost taken off; it mirrors
``import_file`` step by step, so it shows which part of the gap to ``orjson.loads`` is
parsing (a floor for any importer that builds Python objects from every value) and which is
importer code. ``--big K`` then builds a corpus K times as large and runs ``agentpost import`` on it in a
subprocess (streamed, one process), reporting its wall time and peak RSS; the corpus lives in
the temp dir and is removed afterwards. The load average is printed beside the ratios.
The first line says which import path ran: the compiled one (``trajectory/_native.py``, built
by ``scripts/compile_native.py``) or the interpreted one; ``--interpreted`` also times the
interpreted path on the same corpus, in a child process, so both ratios come from one run.
Run: ``.venv/bin/python bench/import.py [--mb 300] [--keep-raw] [--profile] [--phases]
[--workers 2] [--big 3] [--interpreted]``.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from agentpost.trajectory import _native
from agentpost.trajectory.importers import (
    JSONL_FORMATS,
    NotATrajectory,
    detect,
    detect_data,
    harbor,
)
from agentpost.trajectory.importers._common import Ctx
from agentpost.trajectory.importers._file import (
    import_file,
    importer_module,
    parse_json,
    parse_lines,
)
from agentpost.trajectory.importing import (
    ImportReport,
    iter_files,
    iter_import,
    paused_gc,
)
from agentpost.trajectory.io import dumps, read_regular

# the real samples live beside the checkout, never in it (tests/shared_data.py)
DATA = (Path(__file__).resolve().parents[2] / "shared" / "data" / "trajectories").resolve()
# Id fields that live in the content; the copy index is spliced in right after the quote.
ID_FIELDS = re.compile(rb'("(?:instance_id|session_id|sessionId)":\s*")')


def build_corpus(dest: Path, target_bytes: int) -> tuple[int, int]:
    """Copy the samples into ``dest/copy_<k>/`` until ``target_bytes``; returns (bytes, files)."""
    if not DATA.is_dir():
        raise SystemExit(f"no samples: {DATA} is absent (../shared/data beside the checkout)")
    samples = iter_files([DATA])  # trajectory candidates only (PROVENANCE.md is not one)
    total = files = k = 0
    while total < target_bytes:
        for src in samples:
            rel = src.relative_to(DATA)
            keep = rel.name in ("report.json", "all_preds.jsonl", "base_state.json")
            keep = keep or rel.suffix == ".yaml"  # companions known by their name
            out = dest / f"copy_{k:04d}" / rel.parent / (rel.name if keep else f"k{k}_{rel.name}")
            out.parent.mkdir(parents=True, exist_ok=True)
            data = ID_FIELDS.sub(rb"\1" + f"k{k}-".encode(), src.read_bytes())
            out.write_bytes(data)
            total += len(data)
            files += 1
        k += 1
    return total, files


def _loads(path: Path, raw: bytes) -> None:
    if path.name.endswith(".jsonl"):
        for line in raw.split(b"\n"):
            if line.strip():
                orjson.loads(line)
    elif not path.name.endswith((".yaml", ".yml")):
        orjson.loads(raw)


def measure(
    paths: list[Path], keep_raw: bool
) -> tuple[float, float, float, int, int, float, float]:
    """One pass, interleaved per file so both sides see the same machine load and caches:
    ``orjson.loads`` of the file's bytes, then ``import_file`` of it (which reads and parses
    it again), then the canonical serialisation. Returns (loads, import, dump) seconds,
    trajectories, output bytes, and the loads and import seconds again as this thread's CPU
    time (``thread_time``: on a machine whose cores other jobs share, wall time also counts
    the waits for a core, which hit the side with more system calls and allocations harder).
    Runs under the same GC pause as ``import_paths``."""
    t_loads = t_imp = t_dump = c_loads = c_imp = 0.0
    n_traj = out_bytes = 0
    clock, cpu = time.perf_counter, time.thread_time
    with paused_gc():
        for p in paths:
            raw = p.read_bytes()
            c0, t0 = cpu(), clock()
            _loads(p, raw)
            t1, c1 = clock(), cpu()
            try:
                trajs = import_file(p, None, keep_raw)
            except NotATrajectory:
                trajs = []
            t2, c2 = clock(), cpu()
            for t in trajs:
                out_bytes += len(dumps(t)) + 1
            t3 = clock()
            t_loads, t_imp, t_dump = t_loads + t1 - t0, t_imp + t2 - t1, t_dump + t3 - t2
            c_loads, c_imp = c_loads + c1 - c0, c_imp + c2 - c1
            n_traj += len(trajs)
    return t_loads, t_imp, t_dump, n_traj, out_bytes, c_loads, c_imp


PHASES = ("read", "detect", "parse", "convert", "free data", "free trajectories")


def _timer_cost() -> float:
    cpu = time.thread_time
    t0 = cpu()
    for _ in range(1000):
        cpu()
    return (cpu() - t0) / 1000


def phases(paths: list[Path], keep_raw: bool) -> tuple[float, dict[str, float]]:
    """``orjson.loads`` CPU seconds and import's CPU seconds per step over ``paths``, the steps
    of ``import_file`` (BOM, companions and errors as there); each reading loses the timer's
    own cost. Files that are skipped count in the steps they reached."""
    cpu, cost = time.thread_time, _timer_cost()
    spent = dict.fromkeys(PHASES, 0.0)
    c_loads = 0.0
    with paused_gc():
        for p in paths:
            raw = p.read_bytes()
            t0 = cpu()
            _loads(p, raw)
            t1 = cpu()
            c_loads += t1 - t0 - cost
            data = trajs = None
            marks = [cpu()]
            try:
                raw = read_regular(p).removeprefix(b"\xef\xbb\xbf")
                marks.append(cpu())
                name = detect(p, raw)
                if name is None and not p.name.endswith(".jsonl"):  # parsed to detect: counted here
                    data = parse_json(raw, p)
                    name = detect_data(data)
                if name is None or harbor.duplicate_of_atif(p, name):
                    continue
                marks.append(cpu())
                module = importer_module(name)
                if name in JSONL_FORMATS or not hasattr(module, "convert"):
                    data = data if data is not None else parse_lines(raw, p)
                    marks.append(cpu())
                    trajs = module.convert_lines(data, Ctx(p), keep_raw)
                else:
                    data = data if data is not None else parse_json(raw, p)
                    marks.append(cpu())
                    trajs = module.convert(data, Ctx(p), keep_raw)
                harbor.join(p, trajs)
                marks.append(cpu())
            except NotATrajectory:  # a companion (at detect) or a continuation (at convert)
                marks.append(cpu())
            finally:
                if len(marks) == 2:  # left at ``continue``: the decision counts as detect
                    marks.append(cpu())
                del data, raw
                marks.append(cpu())
                del trajs
                marks.append(cpu())
                # the steps not reached (a companion stops after detect) get the frees' marks
                steps = PHASES[: len(marks) - 3] + PHASES[4:]
                for step, a, b in zip(steps, marks, marks[1:], strict=False):
                    spent[step] += b - a - cost
    return c_loads, spent


def print_phases(c_loads: float, spent: dict[str, float]) -> None:
    total = sum(spent.values())
    parts = "  ".join(f"{k} {v / c_loads:.2f}" for k, v in spent.items())
    print(f"phases (CPU, x orjson.loads): {parts}  = {total / c_loads:.2f}")
    print(f"             ratio {c_loads / total:.3f}  ({load()})")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def workers_pass(root: Path, workers: int, keep_raw: bool) -> tuple[float, int]:
    """Wall time of a multiprocess import of ``root`` (workers included), trajectories."""
    t0 = time.perf_counter()
    n = sum(1 for _ in iter_import([root], ImportReport(), None, keep_raw, workers))
    return time.perf_counter() - t0, n


def big_import(root: Path, factor: int, target_bytes: int) -> None:
    """``agentpost import`` of a corpus ``factor`` times the bench's, in a subprocess: wall
    time and the child's peak RSS (``ru_maxrss``), against the corpus size."""
    big = root / "big"
    size, nfiles = build_corpus(big, factor * target_bytes)
    out = root / "big.jsonl"
    exe = Path(sys.executable).with_name("agentpost")
    t0 = time.perf_counter()
    r = subprocess.run([str(exe), "import", str(big), "-o", str(out)], capture_output=True)
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(
        f"big import   : {size / 1e6:.0f} MB in {nfiles} files ({factor}x), exit {r.returncode},"
        f" {wall:.1f} s, {size / 1e6 / wall:.1f} MB/s, peak RSS {rss:.0f} MiB,"
        f" output {out.stat().st_size / 1e6:.0f} MB  ({load()})"
    )
    print("             " + r.stdout.decode().splitlines()[0][:160])


def interpreted_pass(root: Path, repeat: int, keep_raw: bool) -> None:
    """This bench again on the same corpus in a child process with the compiled build turned
    off (``AGENTPOST_PURE_IMPORT=1``): the ratio of the interpreted import path."""
    cmd = [sys.executable, __file__, "--corpus", str(root), "--repeat", str(repeat)]
    env = {**os.environ, _native.OFF: "1"}
    out = subprocess.run(cmd + (["--keep-raw"] if keep_raw else []), env=env, capture_output=True)
    if out.returncode != 0:
        raise SystemExit(f"the interpreted pass failed:\n{out.stderr.decode()[-2000:]}")
    for line in out.stdout.decode().splitlines():
        if line.startswith(("import path", "import  ", "import (CPU)")):
            print("  interpreted | " + line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--mb", type=float, default=300.0, help="corpus size in MB (>= 300 for the report)"
    )
    ap.add_argument("--keep-raw", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument(
        "--repeat", type=int, default=3, help="time each pass this many times, keep the best"
    )
    ap.add_argument("--workers", type=int, default=0, help="also time a multiprocess import")
    ap.add_argument(
        "--big", type=int, default=0, help="also import a corpus this many times as large"
    )
    ap.add_argument("--phases", action="store_true", help="split import's CPU time by step")
    ap.add_argument(
        "--interpreted",
        action="store_true",
        help="also time the interpreted import path on the same corpus (a child process)",
    )
    ap.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)  # the child's: reuse one
    args = ap.parse_args()
    tmp = args.corpus or Path(tempfile.mkdtemp(prefix="agentpost-bench-"))
    try:
        if args.corpus:
            size, nfiles = sum(p.stat().st_size for p in iter_files([tmp])), len(iter_files([tmp]))
        else:
            size, nfiles = build_corpus(tmp, int(args.mb * 1e6))
        print(f"import path  : {_native.status()}")
        paths = iter_files([tmp])
        for p in paths:  # warm the page cache
            p.read_bytes()
        mb = size / 1e6
        rounds = [measure(paths, args.keep_raw) for _ in range(args.repeat)]
        t_loads, t_imp, t_dump = (sum(r[i] for r in rounds) / len(rounds) for i in range(3))
        n_traj, out_bytes = rounds[0][3], rounds[0][4]
        ratios = [r[0] / r[1] for r in rounds]
        cpu_ratios = [r[5] / r[6] for r in rounds]
        c_loads, c_imp = (sum(r[i] for r in rounds) for i in (5, 6))
        print(
            f"corpus: {mb:.1f} MB in {nfiles} files, {n_traj} trajectories "
            f"(keep_raw={args.keep_raw}; mean of {args.repeat} interleaved rounds)"
        )
        print(f"orjson.loads : {t_loads:7.2f} s  {mb / t_loads:8.1f} MB/s")
        print(
            f"import       : {t_imp:7.2f} s  {mb / t_imp:8.1f} MB/s  ratio {t_loads / t_imp:.3f}"
            f"  (per round: {', '.join(f'{x:.3f}' for x in ratios)}; {load()})"
        )
        print(
            f"import (CPU) : ratio {c_loads / c_imp:.3f} of orjson.loads' CPU time"
            f"  (per round: {', '.join(f'{x:.3f}' for x in cpu_ratios)})"
        )
        t_all = t_imp + t_dump
        print(
            f"import+dump  : {t_all:7.2f} s  {mb / t_all:8.1f} MB/s  ratio {t_loads / t_all:.3f}"
            f"  (output {out_bytes / 1e6:.1f} MB)"
        )
        if args.workers > 1:
            wall, n = workers_pass(tmp, args.workers, args.keep_raw)
            print(
                f"import x{args.workers}   : {wall:7.2f} s  {mb / wall:8.1f} MB/s wall, {n} trajectories"
                f" (processes started inside; {load()})"
            )
        if args.phases:
            print_phases(*phases(paths, args.keep_raw))
        if args.big:
            big_import(tmp, args.big, int(args.mb * 1e6))
        if args.interpreted:
            interpreted_pass(tmp, args.repeat, args.keep_raw)
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            measure(paths[: max(1, len(paths) // 10)], args.keep_raw)
            prof.disable()
            pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(15)
    finally:
        if not args.corpus:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
