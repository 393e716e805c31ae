"""`agentpost scvd calibrate|metrics` and `agentpost diagnose` (collect, ftd and match are in
``scvd_data``): read, call library code, write.

Layer: edges.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from agentpost.commands._options import (
    agent_option,
    config,
    read_trajectory_files,
    sandbox_backend,
    suite_dir,
    task_option,
)
from agentpost.documents.formats import producer
from agentpost.errors import InputError
from agentpost.intervals import RESAMPLES

ICA_HELP = ("Which runs the accuracy metrics (ICA, final accuracy, W2R, R2W) count: valid_yc (runs "
            "whose candidate was checked and graded) or all_with_missing_as_0 (every graded run, "
            "an ungraded candidate counted as wrong).")  # fmt: skip
BOOT_HELP = "Bootstrap resamples for the intervals (0: no intervals)."


def _print_json(doc) -> None:
    import orjson

    sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")


def metrics_cmd(
    records: Annotated[
        Path, typer.Argument(help="JSONL: {model, run, task, I_c, I_v, z, y_c, y_f} per line.")
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ica_population: Annotated[str, typer.Option(help=ICA_HELP)] = "valid_yc",
    n_boot: Annotated[int, typer.Option("--bootstrap", min=0, help=BOOT_HELP)] = RESAMPLES,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """The seven self-verification metrics (and ICA, final accuracy, W2R, R2W, net gain)."""
    from agentpost.scvd import metrics as M
    from agentpost.scvd.calibrate_io import read_rows
    from agentpost.scvd.records import METRICS_FORMAT

    recs = []
    for n, row in read_rows(records):
        try:
            recs.extend(M.from_dicts([row]))
        except ValueError as e:
            hint = ""
            if str(row.get("format", "")).startswith("agentpost.trajectory/"):
                hint = " (a trajectory; `agentpost diagnose` writes records.jsonl from these)"
            raise InputError(records, f"line {n}", f"bad metric record: {e}{hint}") from None
    if not recs:
        raise InputError(records, None, "no metric records")
    if ica_population not in M.POPULATIONS:
        raise InputError(None, "--ica-population", f"choose from {', '.join(M.POPULATIONS)}")
    out = M.compute(recs, ica_population=ica_population, n_boot=n_boot, seed=seed)
    args = {
        "records": str(records),
        "ica_population": ica_population,
        "n_boot": n_boot,
        "seed": seed,
    }
    doc = {
        "format": METRICS_FORMAT,
        "producer": producer(M.compute, **args),
        **out,
    }
    if json_out:
        _print_json(doc)
        return
    from agentpost.scvd.diagnose_out import metrics_text

    sys.stdout.write(metrics_text(out))


def calibrate_cmd(
    labels: Annotated[
        Path,
        typer.Argument(
            help="JSONL of hand-checked annotations (8 fields, optional call_order, trajectory), "
            "or real labels that name their trajectory by path; 'bundled' = the scripted "
            "calibration set shipped with agentpost, 'real' = the hand labels of real public "
            "trajectories shipped with it (read from --data-root)."
        ),
    ],
    annotations: Annotated[
        list[Path] | None,
        typer.Argument(
            help="One JSONL per judge (8-field lines), or records.jsonl files of a diagnose run."
        ),
    ] = None,
    heuristic: Annotated[
        bool,
        typer.Option(
            "--heuristic",
            help="Also run the default panel's rule seats on the labelled trajectories.",
        ),
    ] = False,
    data_root: Annotated[
        list[Path] | None,
        typer.Option(
            "--data-root",
            help="Where real labels' trajectory paths are read (repeatable; first hit wins). "
            "Default: ../shared/data/trajectories beside the current directory.",
        ),
    ] = None,
    split: Annotated[
        str,
        typer.Option(
            help="Real labels only: tune | heldout | all, or one batch: v1-tune | v1-heldout | "
            "v2-heldout | v3-heldout | v4-heldout | v5-heldout."
        ),
    ] = "all",
    legacy: Annotated[
        bool,
        typer.Option("--legacy", help="With --heuristic: also score the heuristic/3 variants."),
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Judge accuracy against labels: each seat alone, the panels, their agreement, the arbiter.

    Per seat and panel: pooled, strict, per field, boundary, z confusion; Krippendorff's alpha."""
    from agentpost.scvd import calibrate_io, real_labels
    from agentpost.scvd.diagnose_out import calibration_text

    if str(labels) == "bundled" and not labels.exists():
        labels = calibrate_io.BUNDLED_LABELS
    if str(labels) == "real" and not labels.exists():
        labels = real_labels.LABELS
    if split not in ("all", *real_labels.SPLITS, *real_labels.BATCHES):
        choices = ", ".join(("all", *real_labels.SPLITS, *real_labels.BATCHES))
        raise InputError(None, "--split", f"choose from {choices}")
    doc = calibrate_io.calibrate_files(
        labels, annotations or [], heuristic, data_root, split, legacy
    )
    if json_out:
        _print_json(doc)
    else:
        sys.stdout.write(calibration_text(doc))


def diagnose_cmd(
    files: Annotated[list[Path], typer.Argument(help="Canonical trajectory JSONL files.")],
    tasks: Annotated[
        str, typer.Option("--suite", help="Suite directory, or a bundled suite name.")
    ] = "terminal",
    judges: Annotated[
        Path | None,
        typer.Option(
            "--judges", help="Judge panel config (YAML/JSON); default: offline heuristics."
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Run directory (reused to resume).")
    ] = Path("scvd-run"),
    ica_population: Annotated[str, typer.Option(help=ICA_HELP)] = "valid_yc",
    n_boot: Annotated[int, typer.Option("--bootstrap", min=0, help=BOOT_HELP)] = RESAMPLES,
    replay_concurrency: Annotated[
        int, typer.Option("--workers", min=1, help="Candidate states replayed at once.")
    ] = 2,
    backend: Annotated[
        str, typer.Option(help="Sandbox backend: bwrap, docker or package.module:Class.")
    ] = "bwrap",
    progress: Annotated[
        bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr.")
    ] = True,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print metrics.json instead of the summary.")
    ] = False,
    agents: Annotated[list[str] | None, agent_option(annotated=True)] = None,
    task_ids: Annotated[list[str] | None, task_option(annotated=True)] = None,
) -> None:
    """Annotate (3 judges), vote, replay each candidate, and compute the SCVD metrics."""
    from agentpost.judges.config import build_panel, load_config
    from agentpost.scvd.pipeline import DiagnoseOptions, diagnose
    from agentpost.tasks.loader import load_suite

    opts = config(DiagnoseOptions, {"ica_population": "--ica-population", "n_boot": "--bootstrap",
                                    "replay_concurrency": "--workers"},
                  ica_population=ica_population, n_boot=n_boot,
                  replay_concurrency=replay_concurrency, backend=backend,
                  progress=progress)  # fmt: skip
    sandbox_backend(backend)
    suite = suite_dir(tasks)
    trajs, roots = read_trajectory_files(files, "no trajectories to diagnose", agents, task_ids)
    cfg = load_config(judges)
    panel = build_panel(
        cfg, str(judges or "default judge config"), judges.parent if judges else None
    )
    opts.snapshot_roots = roots
    args = {
        "files": [str(f) for f in files],
        "tasks": str(suite),
        "judges": str(judges) if judges else None,
        "out": str(out),
        "ica_population": ica_population,
        "n_boot": n_boot,
        "backend": backend,
    }
    doc = diagnose(trajs, load_suite(suite), panel, out, opts, args)
    if as_json:
        sys.stdout.write((out / "metrics.json").read_text().rstrip("\n") + "\n")
    else:
        sys.stdout.write((out / "summary.md").read_text())
        print(f"wrote {out / 'metrics.json'}, {out / 'records.jsonl'} and {out / 'summary.md'}")
    failed = _all_judge_calls_failed(doc) or _no_replay_ran(doc)
    if failed:
        print(f"error: {failed}; see {out / 'summary.md'}", file=sys.stderr)
        raise typer.Exit(1)


def _no_replay_ran(doc: dict) -> str | None:
    """Why nothing was measured when candidates were found but none could be replayed (their
    tasks are not in the suite, or every replay failed on infrastructure), or None."""
    status = doc["replay"]["status"]
    total = sum(status.values())
    if not total or status.get("ok", 0) or any(k not in ("task_missing", "infra_error")
                                               for k in status):  # fmt: skip
        return None
    why = ", ".join(f"{k}: {v}" for k, v in sorted(status.items()))
    hint = (
        " (pass the suite that holds these tasks with --suite)"
        if status.get("task_missing")
        else ""
    )
    return (f"none of the {total} candidate states could be replayed ({why}): nothing that needs "
            f"the candidate's outcome (ICA, EDR, ESP, CPR, VPR, RSR) is measured{hint}")  # fmt: skip


def _all_judge_calls_failed(doc: dict) -> str | None:
    """Why no judge answered at all (every call an endpoint error, e.g. 401), or None."""
    status = doc["judges"]["status"]
    total = sum(n for counts in status.values() for n in counts.values())
    failed = sum(counts.get("infra_error", 0) for counts in status.values())
    if total and failed == total:
        return f"every judge call failed ({failed} of {total}): the metrics rest on no judgement"
    return None


def register(app: typer.Typer) -> None:
    scvd = typer.Typer(
        help="SCVD: self-verification metrics, judge calibration, training data.",
        no_args_is_help=True,
    )
    scvd.command("metrics")(metrics_cmd)
    scvd.command("calibrate")(calibrate_cmd)
    from agentpost.commands.scvd_data import add_to

    add_to(scvd)
    app.add_typer(scvd, name="scvd")
    app.command("diagnose")(diagnose_cmd)
