"""The lab section renders both experiments' tables with CIs, Δ vs GRPO, curves and caveats."""

from __future__ import annotations

from agentpost.report.lab import render


def _est(m, lo, hi, **kw):
    return {"mean": m, "ci95": [lo, hi], **kw}


HERO = {
    "producer": {"caveat": "Micro scale: directions only."},
    "table": {
        "grpo": {k: _est(0.5, 0.4, 0.6) for k in ("resolved", "tokens", "unproductive", "entropy")},
        "hero": {
            "resolved": _est(0.5, 0.4, 0.6),
            "tokens": _est(410.0, 380.0, 440.0, delta_vs_grpo=_est(-37.0, -60.0, -12.0)),
            "unproductive": _est(0.2, 0.1, 0.3),
            "entropy": _est(0.3, 0.2, 0.4),
        },  # fmt: skip
    },
    "runs": [
        {
            "variant": v,
            "seed": s,
            "curve": [
                {"step": 0, "resolved": 0.2, "tokens": 500.0},
                {"step": 3, "resolved": 0.3, "tokens": 450.0 if v == "hero" else 520.0},
            ],
        }
        for v in ("grpo", "hero")
        for s in (0, 1)
    ],  # fmt: skip
}
SCVD = {
    "producer": {
        "caveat": "Micro scale, model teacher.",
        "teacher": "the student trained further on verified behaviour",
    },
    "table": {
        v: {
            "pass1": _est(0.3, 0.2, 0.4),
            "EDR": {"mean": None, "ci95": None},
            "turns": _est(4.0, 3.5, 4.5),
            "tokens": _est(300.0, 250.0, 350.0),
            "n": 60,
        }
        for v in ("base", "ftd", "scvd")
    },
    "directions": [
        {
            "name": "scvd_vs_ftd:pass1",
            "expected": "SCVD beats FTD",
            "metric": "pass1",
            "estimate": _est(0.05, -0.02, 0.12),
            "verdict": "inconclusive",
        }  # fmt: skip
    ],
}


def test_lab_section_shows_both_experiments():
    s = render(("lab-hero/hero_lab.json", HERO), ("lab-scvd/scvd_lab.json", SCVD))
    assert s.present and s.provenance == ["lab-hero/hero_lab.json", "lab-scvd/scvd_lab.json"]
    body = s.body
    assert "Micro scale: directions only." in body and "Micro scale, model teacher." in body
    assert "(Δ -37 [-60, -12])" in body  # HERO's token difference against GRPO, with its CI
    assert body.count("<svg") == 2 and "RL step" in body
    assert "NA" in body and "trained further on verified behaviour" in body
    assert (
        "scvd_vs_ftd:pass1" in body and "inconclusive" in body and "0.050 [-0.020, 0.120]" in body
    )


def test_lab_section_with_one_experiment():
    s = render(None, ("x/scvd_lab.json", SCVD))
    assert "SCVD vs FTD" in s.body and "HERO vs GRPO" not in s.body


def test_a_lab_folder_gets_the_lab_section_and_other_runs_do_not(tmp_path):
    import json

    from agentpost.report.build import render_run_dir

    lab_dir = tmp_path / "lab"
    lab_dir.mkdir()
    (lab_dir / "hero_lab.json").write_text(json.dumps({"format": "agentpost.lab-hero/1", **HERO}))
    html = render_run_dir(lab_dir).read_text()
    assert "HERO vs GRPO" in html and "Micro scale: directions only." in html
    other = tmp_path / "other"
    other.mkdir()
    assert "HERO vs GRPO" not in render_run_dir(other).read_text()
