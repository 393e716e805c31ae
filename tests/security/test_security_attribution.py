"""Attribution statistics (spec b.3) on hand-built label sets."""

from __future__ import annotations

import pytest

from agentpost.security.attribution import (
    attribute,
    frequencies,
    paired_differences,
    phi,
    phi_testing,
    validate_record,
    wilson,
)


def rec(agent, task, func, sec, planning="none", coding="none", testing="none"):
    return dict(
        agent=agent,
        task=task,
        func=func,
        sec=sec,
        planning=planning,
        coding=coding,
        testing=testing,
    )


def test_frequencies_over_functionally_correct_runs_with_wilson_ci():
    recs = [
        rec("A", "t1", True, True, testing="target_aligned", planning="generic"),
        rec("A", "t2", True, False, testing="generic"),
        rec("A", "t3", True, True),
        rec(
            "A", "t4", False, False, testing="target_aligned"
        ),  # not in the func-correct population
    ]
    f = frequencies(recs)["A"]
    assert (f["n"], f["n_func_correct"]) == (4, 3)
    t = f["func_correct"]["testing"]
    assert (t["target_aligned"]["k"], t["target_aligned"]["n"]) == (1, 3)
    assert t["generic"]["rate"] == pytest.approx(1 / 3) and t["any"]["rate"] == pytest.approx(2 / 3)
    # 3 trajectories: too few for an interval (intervals.MIN_N), and the rate says so
    assert t["target_aligned"]["ci95"] is None
    assert t["target_aligned"]["ci_note"] == "too few trajectories for an interval: 3 < 5"
    from agentpost.security.attribution import wilson

    assert wilson(1, 3) == pytest.approx((0.0615, 0.7923), abs=1e-3)
    assert f["all"]["testing"]["target_aligned"]["k"] == 2
    assert f["sec_pass"]["rate"] == 0.5 and f["func_pass"]["rate"] == 0.75
    assert f["func_correct"]["planning"]["generic"]["k"] == 1


def test_wilson_edges():
    assert wilson(0, 0) is None
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and 0.27 < hi < 0.28
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and 0.72 < lo < 0.73


def _paired_set():
    return [
        rec("A", "t1", True, True, planning="target_aligned"),
        rec("B", "t1", True, False),
        rec("A", "t2", True, False),
        rec("B", "t2", True, False),
        rec("A", "t3", True, True, planning="target_aligned"),
        rec("B", "t3", True, False, planning="target_aligned"),
        rec("A", "t4", True, True),  # B has no functionally correct run on t4: skipped
        rec("B", "t4", False, False),
    ]


def test_paired_difference_r_by_hand():
    # Δb = [1, 0, 0], Δs = [1, 0, 1]  →  r = (1/3) / (6/9) = 0.5
    out = paired_differences(_paired_set(), "A", "B", "planning")
    assert out["n_tasks"] == 3
    assert [t["task"] for t in out["tasks"]] == ["t1", "t2", "t3"]
    assert out["r"] == pytest.approx(0.5)


def test_paired_difference_na_with_two_tasks_or_zero_variance():
    two = [r for r in _paired_set() if r["task"] in ("t1", "t2")]
    out = paired_differences(two, "A", "B", "planning")
    assert out["r"] is None and out["na_reason"] == "fewer than 3 tasks"
    out = paired_differences(_paired_set(), "A", "B", "testing")  # Δb all 0
    assert out["r"] is None and out["na_reason"] == "zero variance"


def test_phi_by_hand_and_na_when_a_margin_is_zero():
    x = [True, True, True, False, False, False, False]
    y = [True, True, False, True, False, False, False]
    out = phi(x, y)
    assert (out["n11"], out["n10"], out["n01"], out["n00"]) == (2, 1, 1, 3)
    assert out["phi"] == pytest.approx(5 / 12)
    assert phi([False] * 4, [True, False, True, False])["phi"] is None
    assert phi([True, False], [True, True])["phi"] is None


def test_phi_testing_generic_negative_target_positive():
    recs = [
        rec("A", "t1", True, True, testing="target_aligned"),
        rec("A", "t2", True, True, testing="target_aligned"),
        rec("B", "t1", True, False, testing="generic"),
        rec("B", "t2", True, False, testing="generic"),
        rec("B", "t3", True, True, testing="none"),
        rec("B", "t4", False, False, testing="target_aligned"),  # excluded: func = 0
    ]
    out = phi_testing(recs)
    assert out["n"] == 5
    assert out["generic_only_testing"]["phi"] < 0 < out["target_aligned_testing"]["phi"]
    # target: n11=2 n10=0 n01=1 n00=2 → 4/sqrt(2·3·3·2) = 2/3; generic: n11=0 n10=2 n01=3 n00=0 → −1
    assert out["target_aligned_testing"]["phi"] == pytest.approx(2 / 3)
    assert out["generic_only_testing"]["phi"] == pytest.approx(-1.0)
    none_generic = [r for r in recs if r["testing"] != "generic"]
    assert phi_testing(none_generic)["generic_only_testing"]["phi"] is None


def test_attribute_picks_the_more_secure_agent_as_a():
    out = attribute([validate_record(r) for r in _paired_set()])
    assert (out["agent_a"], out["agent_b"]) == ("A", "B")
    assert out["paired_difference"]["planning"]["r"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("bad", "msg"),
    [
        ({"agent": "A"}, "missing field 'task'"),
        ({**rec("A", "t", True, True), "func": 1}, "'func'"),
        ({**rec("A", "t", True, True), "testing": "maybe"}, "'testing'"),
    ],
)
def test_validate_record_names_the_field(bad, msg):
    with pytest.raises(ValueError, match=msg):
        validate_record(bad)
