"""SCVD metrics on hand-built record sets: every metric, every NA case, aggregation order,
aliases, and Eq. 4 (P(y_f=1) = ICA + W2R − R2W) exactly on the valid set."""

from __future__ import annotations

import pytest

from agentpost.scvd.metrics import compute, from_dicts, pearson
from agentpost.scvd.records import MetricRecord


def R(model="m", run="r1", I_c=True, I_v=True, z="error", y_c=0, y_f=1, task="t"):
    return MetricRecord(model, run, task, I_c, I_v, z, y_c, y_f)


# One run, 10 trajectories, counts chosen so every metric has a distinct known value.
RUN = [
    R(z="error", y_c=0, y_f=1),  # detected error, repaired (W2R)
    R(z="error", y_c=0, y_f=0),  # detected error, not repaired
    R(z="no-error", y_c=0, y_f=0),  # missed error
    R(z="unresolved", y_c=0, y_f=1),  # unresolved on a wrong candidate (W2R)
    R(z="no-error", y_c=1, y_f=1),  # correct pass
    R(z="no-error", y_c=1, y_f=0),  # correct pass then broken (R2W)
    R(z="error", y_c=1, y_f=1),  # false alarm
    R(I_v=False, z=None, y_c=None, y_f=1),  # no verification
    R(I_c=False, I_v=False, z=None, y_c=None, y_f=0),  # no candidate
    R(z="no-error", y_c=None, y_f=1),  # replay failed
]


def test_every_metric_on_one_run() -> None:
    out = compute(RUN, n_boot=0)
    m = out["per_run"]["m"]["r1"]
    assert m["VTR"] == pytest.approx(8 / 9)  # I_v among I_c (9 with a candidate)
    assert m["VOR"] == pytest.approx(7 / 8)  # z != unresolved among I_v=1 (8)
    assert m["EDR"] == pytest.approx(2 / 4)  # valid y_c=0: 4, of which z=error: 2
    assert m["ESP"] == pytest.approx(2 / 3)  # valid z=error: 3, of which y_c=0: 2
    assert m["CPR"] == pytest.approx(2 / 3)  # valid y_c=1: 3, z=no-error: 2
    assert m["VPR"] == pytest.approx(2 / 3)  # valid z=no-error: 3, y_c=1: 2
    assert m["RSR"] == pytest.approx(1 / 2)  # y_c=0, z=error: 2, y_f=1: 1
    assert m["ICA"] == pytest.approx(3 / 7)  # valid set: 7
    assert m["W2R"] == pytest.approx(2 / 7)
    assert m["R2W"] == pytest.approx(1 / 7)
    assert m["net_gain"] == pytest.approx(1 / 7)
    assert m["final_acc"] == pytest.approx(4 / 7)
    assert m["final_acc_all"] == pytest.approx(6 / 10)
    assert m["CAR"] == m["CPR"] and m["VPC"] == m["VPR"]
    c = out["counts"]["all"]
    assert (c["trajectories"], c["annotated"], c["candidates"], c["verified"]) == (10, 10, 9, 8)
    assert (c["valid_yc"], c["replay_missing"]) == (7, 1)


def test_eq4_exact_on_valid_set() -> None:
    for pop in ("valid_yc", "all_with_missing_as_0"):
        out = compute(RUN + [R(run="r2", z="error", y_c=0, y_f=1)], ica_population=pop, n_boot=0)
        c = out["counts"]["all"]
        assert c["final_acc_num"] == c["ICA_num"] + c["W2R_num"] - c["R2W_num"]
        assert c["final_acc_den"] == c["ICA_den"] == c["W2R_den"] == c["R2W_den"]
        for vals in [out["macro"], *out["per_model"].values()]:
            assert vals["final_acc"] == pytest.approx(
                vals["ICA"] + vals["W2R"] - vals["R2W"], abs=1e-12
            )


def test_all_with_missing_as_0_population() -> None:
    m = compute(RUN, ica_population="all_with_missing_as_0", n_boot=0)["per_run"]["m"]["r1"]
    assert m["ICA"] == pytest.approx(3 / 10)  # missing y_c counted as 0, over all 10
    assert m["W2R"] == pytest.approx(4 / 10)  # y_c 0-or-missing and y_f = 1: 2 valid + 2 missing
    assert m["final_acc"] == pytest.approx(6 / 10) == m["final_acc_all"]


@pytest.mark.parametrize(
    "records, na",
    [
        (
            [R(I_c=False, I_v=False, z=None, y_c=None)],
            {"VTR", "VOR", "EDR", "ESP", "CPR", "VPR", "RSR", "ICA"},
        ),
        ([R(I_v=False, z=None, y_c=None)], {"VOR", "EDR", "ESP", "CPR", "VPR", "RSR", "ICA"}),
        ([R(z="no-error", y_c=1)], {"EDR", "ESP", "RSR"}),  # no wrong candidate, no error signal
        ([R(z="error", y_c=0)], {"CPR", "VPR"}),
        ([R(z="unresolved", y_c=0)], {"ESP", "VPR", "RSR", "CPR"}),
        ([R(z="error", y_c=None)], {"EDR", "ESP", "CPR", "VPR", "RSR", "ICA", "W2R", "R2W"}),
        ([R(I_c=None, I_v=None, z=None, y_c=None)], {"VTR", "VOR", "ICA"}),  # unannotated
    ],
)
def test_zero_denominator_is_null_never_zero(records, na) -> None:
    m = compute(records, n_boot=0)["per_model"]["m"]
    for name in na:
        assert m[name] is None, name
    assert m["final_acc_all"] is not None  # graded, so PASS@1 is always defined here


def test_aggregation_is_per_run_then_mean_then_macro() -> None:
    recs = (
        # model a, run 1: EDR 1/1; run 2: EDR 0/3 → per-model mean 0.5 (pooled would be 0.25)
        [R("a", "1", z="error", y_c=0)]
        + [R("a", "2", z="no-error", y_c=0)] * 3
        # model b: run 1 EDR undefined (only correct candidates), run 2 EDR 1/2 → 0.5
        + [R("b", "1", z="no-error", y_c=1)]
        + [R("b", "2", z="error", y_c=0), R("b", "2", z="no-error", y_c=0)]
        # model c: EDR undefined in every run → left out of the macro
        + [R("c", "1", z="no-error", y_c=1)]
    )
    out = compute(recs, n_boot=0)
    assert out["per_model"]["a"]["EDR"] == pytest.approx(0.5)
    assert out["per_model"]["b"]["EDR"] == pytest.approx(0.5)
    assert out["per_model"]["c"]["EDR"] is None
    assert out["macro"]["EDR"] == pytest.approx(0.5)
    assert out["n_models"]["EDR"] == 2 and out["n_models"]["CPR"] == 2
    assert out["counts"]["per_model"]["a"]["EDR_num"] == 1
    assert out["counts"]["per_model"]["a"]["EDR_den"] == 4
    assert out["coverage"]["a"]["replays_valid"] == 4


def test_bootstrap_intervals_contain_the_estimate_and_are_seeded() -> None:
    recs = [
        R("a", str(i % 3), z=z, y_c=y, y_f=f)
        for i, (z, y, f) in enumerate(
            [("error", 0, 1), ("no-error", 1, 1), ("no-error", 0, 0), ("error", 1, 1)] * 6
        )
    ]
    a = compute(recs, n_boot=200, seed=1)
    b = compute(recs, n_boot=200, seed=1)
    assert a["cis"] == b["cis"]
    lo, hi = a["cis"]["macro"]["CPR"]
    assert lo <= a["macro"]["CPR"] <= hi
    assert a["cis"]["macro"]["CAR"] == a["cis"]["macro"]["CPR"]


def test_pearson_across_models() -> None:
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2], [1, 2]) is None
    assert pearson([1, 1, 1], [1, 2, 3]) is None
    recs = []
    for k, model in enumerate(["a", "b", "c"]):  # RSR and final accuracy both rise with k
        recs += [R(model, "1", z="error", y_c=0, y_f=1)] * (k + 1)
        recs += [R(model, "1", z="error", y_c=0, y_f=0)] * (3 - k)
    r = compute(recs, n_boot=0)["pearson_rsr_final_acc"]
    assert r["n_models"] == 3 and r["r"] == pytest.approx(1.0)


def test_from_dicts_validates_and_normalises() -> None:
    rows = [
        {
            "model": "m",
            "run": 1,
            "task": "t",
            "I_c": 1,
            "I_v": True,
            "z": "no_error",
            "y_c": 1,
            "y_f": 0,
        }
    ]
    (rec,) = from_dicts(rows)
    assert rec.z == "no-error" and rec.I_c is True and rec.run == "1"
    with pytest.raises(ValueError):
        from_dicts([{**rows[0], "z": "maybe"}])
    with pytest.raises(ValueError):
        from_dicts([{**rows[0], "y_c": 2}])


def test_no_records_gives_na_everywhere_not_an_error() -> None:
    out = compute([], n_boot=100)
    assert out["per_model"] == {} and set(out["macro"].values()) == {None}
    assert out["counts"]["all"]["trajectories"] == 0 and "cis" not in out


def test_contradictory_records_are_refused() -> None:
    ok = {"model": "m", "run": 1, "task": "t", "I_c": True, "I_v": True, "z": "error", "y_c": 0}
    for bad, says in [({"I_c": False}, "I_c false"), ({"I_c": None}, "unannotated"),
                      ({"z": None}, "I_v true needs z"), ({"I_v": False}, "I_v false needs z null"),
                      ({"I_v": None, "z": None, "y_c": None}, "I_c true needs I_v"),
                      ({"I_v": False, "z": None}, "y_c is replayed only")]:  # fmt: skip
        with pytest.raises(ValueError, match=says):
            from_dicts([{**ok, **bad}])
    assert len(from_dicts([ok, {**ok, "I_c": None, "I_v": None, "z": None, "y_c": None}])) == 2


def test_bootstrap_resamples_within_runs() -> None:
    # run 1 all detected errors, run 2 all missed: resampling inside each run keeps each run's EDR
    # fixed (1 and 0), so the per-model mean is exactly 0.5 in every replicate: the interval would
    # have zero width, and none is shown (intervals.py). Pooled resampling across runs would spread
    # it and give one. A varied run gives a real interval.
    recs = [R("a", "1", z="error", y_c=0)] * 4 + [R("a", "2", z="no-error", y_c=0)] * 4
    out = compute(recs, n_boot=300, seed=3)
    assert out["per_model"]["a"]["EDR"] == 0.5
    assert out["cis"]["per_model"]["a"]["EDR"] is None
    mixed = [R("b", "1", z=z, y_c=0) for z in ["error", "no-error"] * 6]
    lo, hi = compute(mixed, n_boot=300, seed=3)["cis"]["macro"]["EDR"]
    assert 0.1 < lo < 0.5 < hi < 0.9


def test_cli_on_the_wrong_kind_of_file_says_what_it_reads(tmp_path) -> None:
    """`scvd metrics` on diagnose's metrics.json or on trajectories: a hint, one line, no errno."""
    import json
    import subprocess
    import sys

    from agentpost.trajectory.io import write_jsonl
    from agentpost.trajectory.model import Producer, Trajectory

    doc = tmp_path / "metrics.json"
    doc.write_text(json.dumps({"format": "agentpost.scvd.metrics/1"}, indent=2))
    trajs = tmp_path / "trajs.jsonl"
    write_jsonl(
        trajs, [Trajectory(id="t", model="m", turns=[], producer=Producer(name="x", version="0"))]
    )
    cases = {
        doc: "line 1: invalid JSON: unexpected end of data (a multi-line JSON document;"
        " this command reads JSONL)",
        trajs: "line 1: bad metric record: missing run, task (a trajectory; `agentpost diagnose`"
        " writes records.jsonl from these)",
        tmp_path / "nope.jsonl": "cannot read: No such file or directory",
    }
    for path, message in cases.items():
        out = subprocess.run(
            [sys.executable, "-c", "from agentpost.cli import main; main()"]
            + ["scvd", "metrics", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (out.returncode, out.stderr) == (2, f"error: {path}: {message}\n")
