"""The report at scale, without a browser: a trajectory file of any size is streamed (the size
cap holds only for files read whole, and a file over it is named, not dropped in silence), and
the page stays small however many trajectories the run holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_run import small_templates, write_run

from agentpost.report import scan as scan_module
from agentpost.report.build import render_run_dir
from agentpost.report.rundata import load


def test_a_trajectory_file_over_the_cap_is_streamed_and_a_big_document_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_run(tmp_path / "trajectories.jsonl", 60, small_templates())
    records = [{"case_id": f"x{i}", "y_c": 1, "pad": "p" * 200} for i in range(20)]
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "metrics.json").write_text(
        json.dumps({"per_model": {}, "macro": {}, "pad": "q" * 5000})
    )
    monkeypatch.setattr(scan_module, "MAX_BYTES", 4000)
    found = scan_module.scan(tmp_path)
    assert [rel for rel, _ in found.files["trajectories"]] == ["trajectories.jsonl"]
    assert not found.files["scvd_records"] and not found.files["scvd_metrics"]
    assert sorted(p.split(":")[0] for p in found.problems) == ["metrics.json", "records.jsonl"]
    assert len(load(tmp_path).rows) == 60


def test_the_page_of_a_large_run_lists_at_most_500_rows_per_table(tmp_path: Path) -> None:
    write_run(tmp_path / "trajectories.jsonl", 1500, small_templates())
    html = render_run_dir(tmp_path).read_text()
    assert "The table lists the 500 trajectories with most tokens of 1500" in html
    assert html.count("<tr>") < 1500


def test_the_bootstrap_of_one_policys_100k_rollouts_is_drawn_in_small_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The replicate matrix (resamples x rollouts) is drawn a slice at a time past
    stats.CELLS cells; the draws, hence the interval, are the same as in one piece."""
    import numpy as np

    from agentpost.report import stats

    rng = np.random.default_rng(1)
    cols = np.stack([rng.integers(0, 50, 3000), rng.integers(50, 100, 3000)], axis=1).astype(float)
    a = {str(k): cols[k] for k in range(300)}
    b = {str(k): cols[k + 1000] for k in range(300)}
    whole = (stats.sums_ci(cols, stats.ratio, n_boot=300, seed=4),
             stats.paired_sums(a, b, stats.ratio, n_boot=300, seed=4))  # fmt: skip
    assert stats._chunk(100_000) * 100_000 <= stats.CELLS
    monkeypatch.setattr(stats, "CELLS", 7_000)  # slices of 2 and 23 replicates
    sliced = (stats.sums_ci(cols, stats.ratio, n_boot=300, seed=4),
              stats.paired_sums(a, b, stats.ratio, n_boot=300, seed=4))  # fmt: skip
    assert stats._chunk(3000) == 2 and sliced == whole and whole[0]["ci"] is not None
