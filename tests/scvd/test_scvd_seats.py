"""The SCVD rule seats (issue 29): a candidate is a change to what the task is about, decided
from evidence; each seat reads different evidence; verification outputs are read by written
rules. One synthetic trajectory per rule, shaped like the real logs (not copied from them)."""

from __future__ import annotations

import pytest

from agentpost.scvd.changes import call_changes, content_role
from agentpost.scvd.reading import read_output
from agentpost.scvd.seats import SEATS, annotate_seat, boundary_evidence
from agentpost.scvd.target import layout_of
from agentpost.trajectory.importers._common import tool_call
from agentpost.trajectory.model import Observation, Producer, Trajectory, Turn

SWE = "<pr_description>\nConsider the following PR description:\nparse_duration() fails\n</pr_description>"


def out(text: str, code: int | None = 0) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{text}\n</output>"


def traj(*steps, instruction: str = SWE, agent: str = "mini-swe-agent") -> Trajectory:
    """steps: (thought, command, output text, exit code)."""
    turns = [Turn(index=i, text=th, tool_calls=[tool_call("bash", {"command": c}, f"c{i}")],
                  observations=[Observation(call_id=f"c{i}", text=o, exit_code=e)])
             for i, (th, c, o, e) in enumerate(steps)]  # fmt: skip
    return Trajectory(id="t", instruction=instruction, agent=agent, turns=turns,
                      producer=Producer(name="test (synthetic)", version="0"))  # fmt: skip


def annotations(t: Trajectory) -> dict:
    return {s: annotate_seat(t, "t", s) for s in SEATS}


def boundary(a) -> tuple:
    return (a.candidate_step, a.verification_triggered, a.verification_outcome)


READ = (
    "Let me read the file.",
    "cat django/utils/dateparse.py",
    out("import re\nstandard_duration_re = 1"),
    0,
)
FIX = ("I will apply the fix.", "sed -i 's/a/b/' django/utils/dateparse.py", out(""), 0)
CHECK = ("Now run the reproduction script again to verify the fix.", "python reproduce_issue.py",
         out("'-1:-01:00' -> -1 day, 22:59:00"), 0)  # fmt: skip
DONE = ("The output shows the fix works. Submitting.",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", "", None)  # fmt: skip


@pytest.mark.parametrize(
    "setup",
    [
        "pip install asgiref",
        "apt-get install -y dvipng",
        "pip install numpy astropy",
        "mkdir reproduce_app",
        "python -m venv /tmp/venv",
        "pip install -e .",
    ],
)
def test_setup_is_never_the_candidate(setup) -> None:
    t = traj(READ, ("Install what the reproduction needs.", setup, out("Successfully installed"), 0),
             ("Reproduce.", "python reproduce_issue.py", out("None"), 0), FIX, CHECK, DONE)  # fmt: skip
    for seat, a in annotations(t).items():
        assert boundary(a) == (3, True, "supports_pass"), (seat, setup)


def test_scratch_reproduction_and_fixtures_are_not_candidates() -> None:
    t = traj(
        READ,
        ("Write a reproduction.", "cat <<'EOF' > reproduce_issue.py\nprint(1)\nEOF", out(""), 0),
        ("A test app for the check.", "mkdir -p reproduce_app && cat <<'EOF' > reproduce_app/models.py\nx = 1\nEOF", out(""), 0),
        ("A fixture.", "touch test.html.Z test.html.br", out(""), 0),
        FIX,
        CHECK,
        DONE,
    )  # fmt: skip
    roles = [sorted({c.role for c in cc.changes}) for cc in call_changes(t)]
    assert roles == [[], ["scratch"], ["scratch", "setup"], ["scratch"], ["target"], [], []]
    assert {boundary(a) for a in annotations(t).values()} == {(4, True, "supports_pass")}


def test_a_timed_out_install_is_not_a_candidate_and_there_is_none() -> None:
    t = traj(READ, ("Install.", "pip install numpy", "The last command timed out and has been killed.", None),
             ("Submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", "", None))  # fmt: skip
    for a in annotations(t).values():
        assert (a.candidate_formed, a.verification_triggered) == (False, False)


def test_debug_prints_and_comment_only_edits_are_not_candidates() -> None:
    debug = (
        "Add a debug print.",
        "sed -i '457a\\        print(f\"DEBUG: {x}\")' sympy/matrices/common.py",
        out(""),
        0,
    )
    undebug = (
        "Remove debug prints.",
        "sed -i '/DEBUG: row_join/d' sympy/matrices/common.py",
        out(""),
        0,
    )
    t = traj(
        READ,
        debug,
        ("Run.", "python reproduce_issue.py", out("DEBUG: 1"), 0),
        undebug,
        FIX,
        CHECK,
        DONE,
    )
    assert [sorted({c.role for c in cc.changes}) for cc in call_changes(t)][1:4] == [
        ["debug"],
        [],
        ["debug"],
    ]
    assert {boundary(a) for a in annotations(t).values()} == {(4, True, "supports_pass")}
    assert content_role(["# Correctly handle parent default options"]) == "cosmetic"
    assert content_role(["\t//nolint:errcheck // best effort"]) is None  # a directive is code


def test_an_announced_several_part_change_checked_by_inspection_is_one_attempt() -> None:
    part1 = (
        "First, add the import.",
        "sed -i 's/import json/import html\\nimport json/' django/utils/html.py",
        out(""),
        0,
    )
    look = (
        "Verify the import was added.",
        "head -n 5 django/utils/html.py",
        out("import html\nimport json"),
        0,
    )
    part2 = (
        "Now update escape().",
        "sed -i 's/translate(x)/html.escape(x)/' django/utils/html.py",
        out(""),
        0,
    )
    run = ("Run the reproduction script again to verify the new behaviour.", "python reproduce_issue.py",
           out("Escaped: &#x27;"), 0)  # fmt: skip
    a = annotations(traj(READ, part1, look, part2, run))
    assert boundary(a["commands"])[0] == 3 and boundary(a["narration"])[0] == 3
    assert boundary(a["changes"])[0] == 1  # it sees a check after the first edit: the seats differ


@pytest.mark.parametrize(
    ("text", "command", "verdict", "rule"),
    [
        (
            'Traceback (most recent call last):\n  File "/testbed/reproduce_issue.py", line 20\n'
            "django.db.utils.OperationalError: no such table: reproduce_app_author",
            "python reproduce_issue.py",
            "void",
            "check-setup",
        ),
        (
            "Attempting...\nCaught expected ValueError: max() arg is an empty sequence\nAssertionError raised as expected",
            "python test_typeerror.py",
            "positive",
            "expected-exception",
        ),
        (
            "FAILED xarray/tests/test_combine.py::test_combine_by_coords_raises_for_differing_calendars\n"
            "1 failed, 119 passed",
            "pytest xarray/tests/test_combine.py",
            "void",
            "unrelated-failure",
        ),
        (
            "FAILED tests/utils_tests/test_html.py::TestUtilsHtml::test_escape - AssertionError\n1 failed",
            "python tests/runtests.py utils_tests.test_html",
            "negative",
            "failure",
        ),
        ("bash: line 1: ponyc: command not found", "ponyc test.pony", "void", "environment"),
        (
            "Traceback (most recent call last):\nModuleNotFoundError: No module named 'numpy'",
            "python reproduce_issue.py",
            "void",
            "environment",
        ),
        (
            "ISSUE REPRODUCED: xds1.attrs['a'] changed to 'd'",
            "python reproduce_issue.py",
            "negative",
            "failure",
        ),
        (
            "ISSUE NOT REPRODUCED: xds1.attrs['a'] remained 'b'",
            "python reproduce_issue.py",
            "positive",
            "output",
        ),
    ],
)
def test_reading_verification_outputs(text, command, verdict, rule) -> None:
    changed = ["django/utils/html.py", "xarray/core/merge.py", "django/core/serializers/base.py"]
    v = read_output(Observation(text=text, exit_code=1 if verdict == "negative" else 0), "run", command,
                    changed, {"reproduce_issue.py", "test_typeerror.py"})  # fmt: skip
    assert (v.value, v.rule) == (verdict, rule), v


def test_an_inspection_shows_code_so_failure_words_in_it_are_not_a_verdict() -> None:
    listing = Observation(text="def f():\n    raise SyntaxError('x')  # FAILED", exit_code=0)
    assert read_output(listing, "inspect", "cat f.py").value == "positive"
    missing = Observation(text="cat: out.txt: No such file or directory", exit_code=1)
    assert read_output(missing, "inspect", "cat out.txt").value == "negative"


def test_narration_seat_reads_the_agents_own_words() -> None:
    broken = ("Check the change.", "grep -n 'if username' django/utils/dateparse.py",
              out("42:        if username is None:\\n            return"), 0)  # fmt: skip
    after = (
        "It seems sed inserted the \\n literally; I messed up the edit.",
        "python fix.py",
        out(""),
        0,
    )
    t = traj(READ, FIX, broken, after)
    a = annotations(t)
    assert boundary(a["narration"]) == (1, True, "exposes_error")
    assert boundary(a["commands"]) == (1, True, "supports_pass")  # the listing looks fine to rules
    silent = Trajectory(id="s", instruction=SWE, turns=[Turn(index=0, tool_calls=[
        tool_call("bash", {"command": "sed -i 's/a/b/' x.py"}, "c0")])],
        producer=Producer(name="t", version="0"))  # fmt: skip
    assert annotate_seat(silent, "s", "narration") is None  # no words: it abstains


def test_terminal_task_targets_the_named_output_and_the_record_names_its_evidence() -> None:
    t = traj(("Scratch first.", "mkdir test_dir && echo x > test_dir/a.txt", "", None),
             ("Create it.", "printf 'Hello, world!\\n' > hello.txt", "", None),
             ("Verify it.", "cat hello.txt", "Hello, world!", None),
             ("The content is correct.", "echo done", "", None),
             instruction="Create a file called hello.txt with \"Hello, world!\" as the content.",
             agent="terminus-2")  # fmt: skip
    assert layout_of(t).kind == "terminal"
    assert {boundary(a) for a in annotations(t).values()} == {(1, True, "supports_pass")}
    ev = boundary_evidence(t, 1, 0)
    assert ev["evidence"] == "command" and ev["changes"][0][:3] == ["hello.txt", "write", "target"]
    assert boundary_evidence(t, None, None) == {"evidence": "none", "changes": []}


def test_state_diffs_decide_over_the_command_text() -> None:
    # the command's text says nothing parsable; the snapshot diff says what it changed
    t = traj(READ, ("Apply my patch tool.", "./apply.sh", out(""), 0), CHECK, DONE)
    assert call_changes(t)[1].evidence == "none"
    diffs = {(1, 0): [("/testbed/django/utils/dateparse.py", "modified"), ("/tmp/x", "added")]}
    cc = call_changes(t, diffs)[1]
    assert cc.evidence == "state-diff" and cc.target
    assert [(c.path, c.role) for c in cc.changes] == [
        ("django/utils/dateparse.py", "target"),
        ("/tmp/x", "scratch"),
    ]
    assert boundary(annotate_seat(t, "t", "changes", diffs)) == (1, True, "supports_pass")
    assert boundary_evidence(t, 1, 0, diffs)["evidence"] == "state-diff"


def _archive(run_dir, name: str, files: dict[str, bytes], step: int) -> dict:
    import hashlib
    import io
    import json
    import tarfile

    from agentpost.sandbox.snapshot_store import _manifest_key

    (run_dir / "snapshots").mkdir(exist_ok=True)
    path = run_dir / "snapshots" / f"{name}.tar"
    with tarfile.open(path, "w") as tar:
        for member, data in files.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest = run_dir / _manifest_key("t")  # what `run --snapshots` writes beside the archives
    manifest.parent.mkdir(parents=True, exist_ok=True)
    with manifest.open("a") as f:
        line = {"trajectory": "t", "step": step, "call": 0, "sha256": digest}
        f.write(json.dumps(line) + "\n")
    return {
        "path": f"snapshots/{name}.tar",
        "sha256": digest,
        "bytes": path.stat().st_size,
        "call": 0,
    }


def test_state_diffs_from_recorded_snapshots(tmp_path) -> None:
    from agentpost.scvd.statediff import state_diffs

    t = traj(READ, ("Apply my patch tool.", "./apply.sh", out(""), 0), CHECK, DONE)
    base = {"testbed/django/utils/dateparse.py": b"old", "testbed/setup.py": b"s"}
    after = {"testbed/django/utils/dateparse.py": b"new", "testbed/setup.py": b"s", "tmp/x": b"1"}
    for i, files in enumerate([base, after, after]):
        t.turns[i].extra["snapshots"] = [_archive(tmp_path, f"s{i}", files, i)]
    diffs = state_diffs(t, tmp_path)
    assert diffs == {(1, 0): [("/testbed/django/utils/dateparse.py", "modified"), ("/tmp/x", "added")],
                     (2, 0): []}  # fmt: skip
    assert boundary(annotate_seat(t, "t", "changes", diffs)) == (1, True, "supports_pass")
    # a damaged archive is never read: that call has no state diff, its command decides
    (tmp_path / "snapshots/s1.tar").write_bytes(b"x")
    assert (1, 0) not in state_diffs(t, tmp_path)
    # an archive the run's manifest does not list for that call is not believed either
    t.turns[1].extra["snapshots"] = [_archive(tmp_path, "s1", after, 0)]
    assert (1, 0) not in state_diffs(t, tmp_path)
