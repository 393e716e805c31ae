"""Panel vote with arbiter (spec b.3) and the agreement statistics."""

from __future__ import annotations

from agentpost.verification.panel import agreement_stats, vote
from agentpost.verification.records import Annotation


def A(ic=True, step=2, idx=0, bt="clean", iv=True, out="exposes_error") -> Annotation:
    if not ic:
        return Annotation("c", "t", False, None, None, None, False, None)
    return Annotation("c", "t", True, step, idx, bt, iv, out if iv else None)


J = ["j0", "j1", "j2"]


def test_unanimous() -> None:
    d = vote([A(), A(), A()], arbiter=0, judges=J)
    assert d.resolved_by == "vote"
    assert (d.candidate_step, d.z) == (2, "error")
    assert (d.agreement_boundary, d.agreement_semantics, d.n_valid) == (3, 3, 3)


def test_two_of_three_on_both_tuples_from_different_judges() -> None:
    # B: j0 and j1 agree (step 2); S: j1 and j2 agree (no-error)
    d = vote([A(out="exposes_error"), A(out="supports_pass"), A(step=5, out="supports_pass")], 0, J)
    assert d.resolved_by == "vote"
    assert (d.candidate_step, d.candidate_tool_call_index, d.z) == (2, 0, "no-error")
    assert (d.agreement_boundary, d.agreement_semantics) == (2, 2)


def test_no_majority_on_one_tuple_uses_the_arbiters_whole_annotation() -> None:
    # B has a majority (all step 2), S has none: the arbiter (j2) decides both tuples.
    anns = [A(out="exposes_error"), A(out="supports_pass"), A(step=3, out="no_effective_result")]
    d = vote(anns, arbiter=2, judges=J)
    assert d.resolved_by == "arbiter" and d.arbiter == "j2"
    assert (d.candidate_step, d.z) == (
        3,
        "unresolved",
    )  # arbiter's boundary too, not the majority's
    assert (d.agreement_boundary, d.agreement_semantics) == (2, 0)


def test_invalid_annotations_are_abstentions() -> None:
    d = vote([None, A(), A()], arbiter=0, judges=J)
    assert d.resolved_by == "vote" and d.n_valid == 2 and d.agreement_boundary == 2
    # two valid that disagree: no majority; arbiter j1 is valid
    d = vote([None, A(step=1), A(step=2)], arbiter=1, judges=J)
    assert d.resolved_by == "arbiter" and d.candidate_step == 1
    # only one valid annotation: never a majority
    d = vote([None, None, A()], arbiter=2, judges=J)
    assert d.resolved_by == "arbiter"


def test_majority_tuples_with_different_candidate_formed_use_arbiter() -> None:
    # With three valid annotations the two majorities always share a judge, so they cannot
    # disagree on I_c; the rule (spec b.3 toolkit addition) is exercised by forcing the tallies.
    from agentpost.verification import panel

    calls = []
    real = panel._majority

    def fake(tuples):
        calls.append(tuples)
        b = (False, None, None, None)
        s = (True, True, "error")
        return (b, 2) if len(calls) == 1 else (s, 2)

    panel._majority = fake
    try:
        d = vote([A(), A(), A(step=9)], arbiter=2, judges=J)
    finally:
        panel._majority = real
    assert d.resolved_by == "arbiter" and d.candidate_step == 9


def test_invalid_arbiter_leaves_the_trajectory_unannotated() -> None:
    d = vote([A(step=1), A(step=2), None], arbiter=2, judges=J)
    assert d.resolved_by == "unannotated" and d.candidate_formed is None and d.z is None


def test_agreement_stats() -> None:
    ds = [
        vote([A(), A(), A()], 0, J),
        vote([A(), A(), A(step=4)], 0, J),
        vote([A(out="exposes_error"), A(out="supports_pass"), A(out="no_effective_result")], 0, J),
        vote([A(step=1), A(step=2), None], 2, J),
    ]
    s = agreement_stats(ds)
    assert s["full_panel"] == 3
    assert s["three_way_boundary"] == 2 / 3  # first and third
    assert s["three_way_semantics"] == 2 / 3  # first and second
    assert (s["vote_rate"], s["arbiter_rate"], s["unannotated"]) == (0.5, 0.25, 1)
