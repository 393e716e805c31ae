"""Panel vote with arbiter (spec b.3) and the agreement statistics."""

from __future__ import annotations

from itertools import product

from agentpost.scvd.panel import _majority, agreement_stats, vote
from agentpost.scvd.records import Annotation


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
    assert (d.candidate_step, d.z) == (3, "unresolved")  # the arbiter's boundary, not B's majority
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


def test_three_judges_can_never_split_on_candidate_formed() -> None:
    # Spec b.3's toolkit rule "majorities disagree on I_c → arbiter" is defensive for the shipped
    # three-judge panel: two majorities of three always share a judge. Proved by enumerating every
    # triple over abstention, no candidate, and candidates at two steps with four semantics.
    options = [None, A(ic=False)] + [
        A(step=s, iv=iv, out=o)
        for s in (1, 2)
        for iv, o in ((False, None), (True, "exposes_error"), (True, "supports_pass"))
    ]
    both = 0
    for triple in product(options, repeat=3):
        valid = [a for a in triple if a is not None]
        b, _ = _majority([a.boundary_tuple() for a in valid])
        s, _ = _majority([a.semantics_tuple() for a in valid])
        if b is not None and s is not None:
            both += 1
            assert b[0] == s[0], triple
            assert vote(list(triple), 0, J).resolved_by == "vote"
    assert both > 100  # the enumeration did reach the branch's precondition


J5 = [f"j{i}" for i in range(5)]


def test_majority_tuples_with_different_candidate_formed_use_arbiter() -> None:
    # With five judges the rule is reachable. B: three judges share (True, step 2, call 0, clean)
    # but each reads the outcome differently; S: the two "no candidate" judges are the only pair.
    anns = [A(out="exposes_error"), A(out="supports_pass"), A(out="no_effective_result"),
            A(ic=False), A(ic=False)]  # fmt: skip
    assert _majority([a.boundary_tuple() for a in anns]) == ((True, 2, 0, "clean"), 3)
    assert _majority([a.semantics_tuple() for a in anns]) == ((False, False, None), 2)
    d = vote(anns, arbiter=3, judges=J5)
    assert d.resolved_by == "arbiter" and d.arbiter == "j3"
    assert (d.candidate_formed, d.candidate_step, d.verification_triggered) == (False, None, False)
    assert (d.agreement_boundary, d.agreement_semantics, d.n_valid) == (3, 2, 5)
    d = vote(anns, arbiter=0, judges=J5)  # the arbiter's whole annotation, both tuples
    assert (d.candidate_formed, d.candidate_step, d.z) == (True, 2, "error")
    # the mirror case: B's majority is "no candidate", S's is a candidate at differing steps
    anns = [A(step=1), A(step=2), A(step=3), A(ic=False), A(ic=False)]
    d = vote(anns, arbiter=1, judges=J5)
    assert d.resolved_by == "arbiter" and (d.candidate_formed, d.candidate_step) == (True, 2)


def test_a_tie_between_two_pairs_is_no_majority() -> None:
    # Possible only with four or more judges: 2–2 on B must not pick one pair by list order.
    anns = [A(step=1), A(step=1), A(step=2), A(step=2)]
    assert _majority([a.boundary_tuple() for a in anns]) == (None, 0)
    d = vote(anns, arbiter=2, judges=J5[:4])
    assert d.resolved_by == "arbiter" and d.candidate_step == 2 and d.agreement_boundary == 0


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
