"""Five-level reward, ablations, dynamic sampling, GRPO advantage and SecPass metrics."""

from __future__ import annotations

import math
from itertools import combinations

import pytest

from agentpost.security.metrics import pass_at_k, per_cwe, summary
from agentpost.security.patch import inspect_patch, is_test_path, split_sections
from agentpost.security.rewards import (
    ablate,
    dynamic_filter,
    filter_groups,
    five_level,
    group_advantages,
)


@pytest.mark.parametrize(
    ("status", "func", "sec", "want"),
    [
        ("ok", True, True, 1.0),
        ("ok", True, False, 0.5),
        ("ok", False, True, -0.5),
        ("ok", False, False, -0.5),
        ("unusable", None, None, -0.75),
        ("patch_failed", None, None, -0.75),
        ("no_patch", None, None, -1.0),
        ("empty_patch", None, None, -1.0),
        ("invalid_patch", None, None, -1.0),
        ("tests_only", None, None, -1.0),
        ("aborted", None, None, 0.0),
        ("ok", None, True, 1.0),
        ("ok", None, False, -0.5),
    ],
)
def test_five_level_ladder(status, func, sec, want):
    assert five_level(status, func, sec) == want


def test_func_only_value_is_configurable_and_ablations():
    assert five_level("ok", True, False, func_only=0.25) == 0.25
    assert [ablate(r, "binary") for r in (1.0, 0.5, -0.5, -1.0)] == [1, 1, 0, 0]
    assert [ablate(r, "strict_binary") for r in (1.0, 0.5, -0.5)] == [1, 0, 0]
    with pytest.raises(ValueError):
        five_level("weird", True, True)


def test_group_advantage_is_the_releases_bessel_std_with_eps_1e_6():
    rewards = [1.0, 0.5, -0.5, -1.0]
    mean = sum(rewards) / 4
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / 3)  # ddof 1
    want = [(r - mean) / (std + 1e-6) for r in rewards]
    assert group_advantages(rewards) == pytest.approx(want, rel=1e-12)
    pop = math.sqrt(sum((r - mean) ** 2 for r in rewards) / 4)
    assert group_advantages(rewards) != pytest.approx([(r - mean) / pop for r in rewards], rel=1e-3)
    assert group_advantages([0.5] * 4) == [0.0] * 4
    assert group_advantages([1.0]) == [0.0] and group_advantages([]) == []


@pytest.mark.parametrize(
    ("rewards", "aborted", "mode", "keep", "reason"),
    [
        ([1.0, -0.5, -0.5, -1.0], None, "five_level", True, "kept"),
        ([0.5, -0.75, -1.0, -1.0], None, "five_level", True, "kept"),  # +0.5 counts as positive
        ([1.0, 0.0, -0.5, -1.0], [False, True, False, False], "five_level", False, "aborted"),
        ([0.5, 0.5, 0.5, 0.5], None, "five_level", False, "zero_variance"),
        ([-0.5, -0.75, -1.0, -1.0], None, "five_level", False, "no_positive"),
        ([1.0, 0.5, 1.0, 0.5], None, "five_level", True, "kept"),
        ([1.0, 0.5, 1.0, 0.5], None, "binary", False, "zero_variance"),
        ([1.0, 0.5, 1.0, 0.5], None, "strict_binary", True, "kept"),
        ([0.5, -0.5, -1.0, -1.0], None, "strict_binary", False, "zero_variance"),
        ([], None, "five_level", False, "empty"),
    ],
)
def test_dynamic_sampling(rewards, aborted, mode, keep, reason):
    d = dynamic_filter(rewards, aborted, mode)
    assert (d.keep, d.reason) == (keep, reason)


def test_filter_groups_counts_reasons():
    groups = [
        ([1.0, -1.0], [False, False]),
        ([0.5, 0.5], [False, False]),
        ([1.0, -1.0], [True, False]),
    ]
    kept, reasons = filter_groups(groups)
    assert kept == [0] and reasons == {"kept": 1, "zero_variance": 1, "aborted": 1}


def test_pass_at_k_matches_combinatorial_definition():
    n, c = 5, 2
    for k in range(1, n + 1):
        draws = list(combinations(range(n), k))
        brute = sum(any(i < c for i in d) for d in draws) / len(draws)
        assert pass_at_k(n, c, k) == pytest.approx(brute)
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)


def test_summary_excludes_aborted_and_computes_gap():
    samples = [
        {"task": "a", "func": True, "sec": True, "cwes": [22]},
        {"task": "a", "func": True, "sec": False, "cwes": [22]},
        {"task": "b", "func": False, "sec": True, "cwes": [89]},
        {"task": "b", "func": True, "sec": True, "cwes": [89], "sec_inconclusive": True},
        {"task": "b", "func": None, "sec": None, "aborted": True, "cwes": [89]},
    ]
    s = summary(samples, ks=(1, 2))
    assert (s["n"], s["aborted"], s["sec_inconclusive"]) == (4, 1, 1)
    assert (s["func_pass"], s["sec_pass"]) == (0.75, 0.5)
    assert s["security_gap"] == 0.25 and s["insec"] == pytest.approx(1 / 3)
    assert s["sec_pass@1"] == 0.5 and s["sec_pass@2"] == 1.0
    table = per_cwe(samples)
    assert table["CWE-22"]["sec_pass"] == 0.5 and table["CWE-89"]["n"] == 2
    assert summary([])["func_pass"] is None
    # func None with a security verdict: no functional test, a vacuous functional pass (b.1);
    # func None without one (unusable, no patch) is a failure
    s = summary([{"task": "c", "func": None, "sec": True}, {"task": "c", "func": None, "sec": False},
                 {"task": "c", "func": None, "sec": None, "status": "unusable"}])  # fmt: skip
    assert (s["func_pass"], s["sec_pass"]) == (pytest.approx(2 / 3), pytest.approx(1 / 3))


def test_patch_sections_and_test_paths():
    text = (
        "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -1 +1 @@\n-a\n+b\n"
    )
    assert [s.path for s in split_sections(text)] == ["app.py", "tests/test_x.py"]
    v = inspect_patch(text)
    assert (v.kind, v.kept, v.stripped) == ("ok", ("app.py",), ("tests/test_x.py",))
    assert "tests/test_x.py" not in v.patch
    assert inspect_patch("--- a/x.py\n+++ b/x.py\nno hunk\n").kind == "invalid"
    assert (
        is_test_path("pkg/test_a.py")
        and is_test_path("test/data.txt")
        and not is_test_path("app/testing.py")
    )


def test_patch_new_and_deleted_files():
    text = (
        "diff --git a/new.py b/new.py\nnew file mode 100644\nindex 0000000..e69de29\n"
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-y = 2\n"
    )
    v = inspect_patch(text)
    assert (v.kind, v.kept) == ("ok", ("new.py", "old.py"))
