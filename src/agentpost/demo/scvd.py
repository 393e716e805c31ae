"""The demo's SCVD stage: ``scvd.pipeline.diagnose`` (what ``agentpost diagnose`` calls)
over the demo's imported terminal trajectories with the default offline judge panel (three
heuristic variants, arbiter ``artifact``) and candidate-state replay in the demo's backend;
writes ``diagnose/metrics.json`` and ``diagnose/records.jsonl``. Resumable through the
pipeline's own result store (``diagnose/store.sqlite``).

Layer: io.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentpost.demo.model import Demo


def stage_diagnose(d: Demo, trajs_path: Path) -> None:
    """``agentpost diagnose``'s function over the imported trajectories, default offline panel."""
    from agentpost.judges.config import build_panel, load_config
    from agentpost.scvd.pipeline import DiagnoseOptions, diagnose
    from agentpost.tasks.loader import bundled_suite_path, load_suite
    from agentpost.trajectory.io import read_jsonl

    trajs = read_jsonl(trajs_path)
    panel = build_panel(load_config(None), "default judge config")
    run_dir = d.out / "diagnose"
    d.progress(
        f"diagnose: {len(trajs)} trajectories, offline judge panel {', '.join(panel.ids)}, "
        f"candidate-state replay in {d.backend} sandboxes"
    )
    # the pipeline's own progress bars when a person watches; one line per stage otherwise
    opts = DiagnoseOptions(progress=sys.stderr.isatty(), replay_concurrency=2, backend=d.backend)
    args = {
        "files": [str(trajs_path.relative_to(d.out))],
        "tasks": "terminal",
        "judges": None,
        "out": "diagnose",
        "ica_population": opts.ica_population,
        "n_boot": opts.n_boot,
        "backend": opts.backend,
    }
    doc = diagnose(trajs, load_suite(bundled_suite_path("terminal")), panel, run_dir, opts, args)
    macro = doc["metrics"]["macro"]
    d.progress(
        "diagnose: macro "
        + ", ".join(
            f"{k}={'NA' if macro.get(k) is None else f'{macro[k]:.2f}'}"
            for k in ("VTR", "EDR", "RSR")
        )
    )
