"""The panel vote with an arbiter (spec b.3) and the panel's agreement statistics.

Two tuples are voted separately: B = (I_c, step, index, boundary_type) and S = (I_c, I_v, z). A
tuple is decided when at least two judges give it exactly. If either tuple has no majority, or
the two majorities disagree on I_c, the arbiter's complete annotation decides both; if the
arbiter has no valid annotation either, the trajectory is ``unannotated``. Invalid or missing
annotations are abstentions (toolkit rules the paper leaves open).

The panel is three judges (spec b.3; ``judges.config`` refuses any other size). With three, two
majorities always share a judge, so they cannot disagree on I_c: that rule is defensive for the
shipped panel (``test_three_judges_can_never_split_on_candidate_formed`` proves it by
enumeration). ``vote`` itself takes any number of annotations, and for more than three a tuple
also needs more votes than any other tuple (a 2–2 tie is no majority; with three judges a tie
of two pairs cannot occur, so this is exactly b.3 there); with five judges the I_c rule is
reachable and is tested on a real case.

Layer: pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agentpost.scvd.records import Z_TO_OUTCOME, Annotation, PanelDecision


def _majority(tuples: list[tuple]) -> tuple[tuple | None, int]:
    """The tuple given by at least two judges and by more judges than any other tuple, with its
    count; (None, 0) when there is none."""
    top = Counter(tuples).most_common(2)
    if not top or top[0][1] < 2 or (len(top) == 2 and top[1][1] == top[0][1]):
        return None, 0
    return top[0]


def _decision(b: tuple, s: tuple, by: str, agree_b: int, agree_s: int, n_valid: int,
              arbiter: str | None) -> PanelDecision:  # fmt: skip
    return PanelDecision(
        resolved_by=by,
        candidate_formed=b[0],
        candidate_step=b[1],
        candidate_tool_call_index=b[2],
        boundary_type=b[3],
        verification_triggered=s[1],
        z=s[2],
        agreement_boundary=agree_b,
        agreement_semantics=agree_s,
        n_valid=n_valid,
        arbiter=arbiter,
    )


def vote(
    annotations: Sequence[Annotation | None],
    arbiter: int,
    judges: Sequence[str] | None = None,
) -> PanelDecision:
    """Decide one trajectory from the panel's annotations (None = abstention).

    ``arbiter`` is the index of the arbiter judge in ``annotations``; ``judges`` their names
    (recorded in the decision).
    """
    valid = [a for a in annotations if a is not None]
    b, nb = _majority([a.boundary_tuple() for a in valid])
    s, ns = _majority([a.semantics_tuple() for a in valid])
    name = judges[arbiter] if judges else str(arbiter)
    if b is not None and s is not None and b[0] == s[0]:
        return _decision(b, s, "vote", nb, ns, len(valid), None)
    arb = annotations[arbiter] if 0 <= arbiter < len(annotations) else None
    if arb is None:
        return PanelDecision("unannotated", None, None, None, None, None, None, nb, ns,
                             len(valid), name)  # fmt: skip
    return _decision(arb.boundary_tuple(), arb.semantics_tuple(), "arbiter", nb, ns, len(valid),
                     name)  # fmt: skip


def agreement_stats(decisions: Sequence[PanelDecision], panel_size: int = 3) -> dict:
    """Three-way agreement per tuple (over trajectories with a full set of valid annotations),
    and the shares resolved by vote, by the arbiter, and left unannotated (over all)."""
    full = [d for d in decisions if d.n_valid == panel_size]
    n = len(decisions)

    def share(k: int, of: int) -> float | None:
        return k / of if of else None

    by = Counter(d.resolved_by for d in decisions)
    return {
        "trajectories": n,
        "full_panel": len(full),
        "three_way_boundary": share(
            sum(d.agreement_boundary == panel_size for d in full), len(full)
        ),
        "three_way_semantics": share(
            sum(d.agreement_semantics == panel_size for d in full), len(full)
        ),
        "vote_rate": share(by["vote"], n),
        "arbiter_rate": share(by["arbiter"], n),
        "unannotated": by["unannotated"],
    }


def decision_annotation(d: PanelDecision, case_id: str, task: str) -> Annotation | None:
    """The panel's decision as an eight-field annotation (None when unannotated), so the panel
    can be scored against labels like a judge."""
    if d.resolved_by == "unannotated":
        return None
    return Annotation(case_id, task, bool(d.candidate_formed), d.candidate_step,
                      d.candidate_tool_call_index, d.boundary_type,
                      bool(d.verification_triggered), Z_TO_OUTCOME.get(d.z or ""))  # fmt: skip
