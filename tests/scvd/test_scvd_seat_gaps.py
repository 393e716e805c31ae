"""Rule gaps the first held-out batch of real labels showed (issue 29, held-out v1, now tune), each
a class of trajectories rather than one case: a file the instruction names in another case or
without its extension; an inspection that ends the first attempt (and a view that only locates
the next edit, which does not); an environment that says its own results cannot be trusted, a
build that stops before compiling anything; the agent's own test that fails and is then repaired
without touching the candidate. Synthetic trajectories shaped like the real logs (not copied)."""

from __future__ import annotations

import pytest

from agentpost.scvd.changes import call_changes
from agentpost.scvd.reading import read_output
from agentpost.scvd.seats import SEATS, annotate_seat
from agentpost.scvd.target import layout_of
from agentpost.trajectory.importers._common import tool_call
from agentpost.trajectory.model import Observation, Producer, Trajectory, Turn

SWE = "<pr_description>\nConsider the following PR description:\nparse_duration() fails\n</pr_description>"


def out(text: str, code: int | None = 0) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{text}\n</output>"


def traj(*steps, instruction: str = SWE, agent: str = "mini-swe-agent") -> Trajectory:
    """steps: (thought, tool name, arguments, output text, exit code); a str ``arguments`` is a
    bash command."""
    turns = []
    for i, (th, name, args, o, e) in enumerate(steps):
        args = {"command": args} if isinstance(args, str) else args
        turns.append(Turn(index=i, text=th, tool_calls=[tool_call(name, args, f"c{i}")],
                          observations=[Observation(call_id=f"c{i}", text=o, exit_code=e)]))  # fmt: skip
    return Trajectory(id="t", instruction=instruction, agent=agent, turns=turns,
                      producer=Producer(name="test (synthetic)", version="0"))  # fmt: skip


def got(t: Trajectory) -> dict:
    return {s: (a.candidate_step, a.verification_triggered, a.verification_outcome)
            for s, a in ((s, annotate_seat(t, "t", s)) for s in SEATS)}  # fmt: skip


def bash(thought: str, command: str, text: str = "", code: int = 0) -> tuple:
    return (thought, "bash", command, out(text, code), code)


SUBMIT = bash(
    "The content is correct. Submitting.",
    "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
)


@pytest.mark.parametrize(
    ("request_text", "written"),
    [("We can license this repo under the MIT license.", "LICENSE"),
     ("Please add a readme that explains the install.", "README.md"),
     ("Add a CODEOWNERS file for the docs team.", ".github/CODEOWNERS")],
)  # fmt: skip
def test_a_project_file_the_request_names_in_prose_is_the_target(request_text, written) -> None:
    """'license' in the request names LICENSE (any case, with or without an extension), and a new
    one is the requested change even in a repository task, where new files the issue names are
    usually the reporter's scripts."""
    t = traj(
        ("Create the file first.", "bash", f"touch {written}", out(""), 0),
        ("Write the content.", "bash", f"cat <<'EOF' > {written}\nMIT License\nEOF", out(""), 0),
        ("Verify the file.", "bash", f"cat {written}", out("MIT License"), 0),
        SUBMIT,
        instruction=f"Please fix the following issue for the repository in /workspace.\n"
        f"# Problem Statement\n{request_text}",
    )
    assert layout_of(t).is_named(written)
    roles = [[(c.path, c.op, c.role) for c in cc.changes] for cc in call_changes(t)[:2]]
    assert roles[0] == [(written, "touch", "setup")]  # an empty file is a stub, not an attempt
    assert [(p, r) for p, _, r in roles[1]] == [(written, "target")]
    assert set(got(t).values()) == {(1, True, "supports_pass")}
    # a new file named like a script of the reporter's stays scratch in a repository task
    t2 = traj(bash("Reproduce.", "cat <<'EOF' > test.py\nprint(1)\nEOF"),
              instruction=SWE.replace("fails", "fails, see test.py"))  # fmt: skip
    assert [c.role for c in call_changes(t2)[0].changes] == ["scratch"]


def test_an_inspection_of_the_requested_output_ends_the_first_attempt() -> None:
    """The agent lists the file it made (a check, section 5: `ls` of a requested output), then
    throws it away and writes elsewhere: the first attempt ended at the listing, for the
    commands seat too (it lets inspections between edits of one file pass as construction)."""
    t = traj(
        ("I will create docs/blue.md.", "write_file", {"file_path": "docs/blue.md", "content": "# Blue\nThe sky."},
         "Successfully created and wrote to new file docs/blue.md.", None),
        bash("Check it.", "ls -l docs/blue.md", "-rw-r--r-- 1 me staff 309 docs/blue.md"),
        bash("I misread; I'll remove it.", "rm docs/blue.md"),
        bash("Append to the existing file instead.", "echo '# Red' >> docs/color.md"),
        bash("Verify.", "cat docs/color.md", "# Blue\n# Red"),
        instruction="run an agent that creates a color file inside docs, choose your color",
        agent="gemini-cli",
    )  # fmt: skip
    g = got(t)
    assert g["changes"][0] == 0 and g["commands"][0] == 0


def test_a_view_that_only_locates_the_next_edit_is_not_a_check() -> None:
    """An editor view of lines about to be replaced (it shows none of what the agent wrote) does
    not end the construction stretch; a view that shows the agent's own lines does (changes
    seat)."""
    path = "/workspace/repo/src/match.c"
    insert = ("Insert the check.", "str_replace_editor",
              {"command": "insert", "path": path, "insert_line": 317, "new_str": "if (iso) p = trn(p);"},
              "The file has been edited.", None)  # fmt: skip
    locate = ("View the lines to replace.", "str_replace_editor",
              {"command": "view", "path": path, "view_range": [314, 317]},
              "   316\t    case TK_MATCH_DONTCARE:\n   317\t      return pattern_type;", None)  # fmt: skip
    move = ("Move the check before the return.", "str_replace_editor",
            {"command": "str_replace", "path": path, "old_str": "case TK_MATCH_DONTCARE:\n",
             "new_str": "case TK_MATCH_DONTCARE:\n      if (iso) p = trn(p);\n"},
            "The file has been edited.", None)  # fmt: skip
    run = bash("Build and test.", "cd /workspace/repo && make test", "1 test passed")
    instruction = "Please fix the following issue for the repository in /workspace/repo.\n# Problem Statement\nmatch crashes"
    t = traj(insert, locate, move, run, instruction=instruction, agent="openhands")
    assert got(t)["changes"][0] == 2
    looks = ("Look at my change.", "str_replace_editor", {"command": "view", "path": path, "view_range": [316, 318]},
             "   317\t      if (iso) p = trn(p);\n   318\t      return pattern_type;", None)  # fmt: skip
    t2 = traj(insert, looks, move, run, instruction=instruction, agent="openhands")
    assert got(t2)["changes"][0] == 0


@pytest.mark.parametrize(
    ("text", "command", "verdict", "rule"),
    [
        ("/bin/sh: 1: cd: can't cd to /workspace/ponyc/build/build_release\n"
         "make: *** [Makefile:192: build] Error 2", "cd /workspace/ponyc && make", "void", "environment"),
        ("CMake Error at CMakeLists.txt:27 (find_package):\n  Could not find a package configuration file "
         "provided by \"LLVM\"\n-- Configuring incomplete, errors occurred!", "cmake -B build", "void", "environment"),
        ("gmake[1]: Makefile: No such file or directory\ngmake[1]: *** No rule to make target 'Makefile'.  Stop.",
         "make", "void", "environment"),
        # a compiler diagnostic in the changed file is the candidate's failure, whatever else
        ("src/match.c:317:7: error: 'iso' undeclared\nmake: *** [Makefile:192: build] Error 2\n"
         "can't cd to /x", "make", "negative", "failure"),
        ("Matplotlib is not built with the correct FreeType version to run tests. Expect many image "
         "comparison failures below.\nE   matplotlib.testing.exceptions.ImageComparisonFailure: images not "
         "close (RMS 9.655)\nlib/matplotlib/testing/compare.py:208: ImageComparisonFailure\n1 failed",
         "pytest lib/matplotlib/tests/test_axes.py -k hist", "void", "environment"),
        # the same warning does not excuse an assertion about the changed code
        ("Matplotlib is not built with the correct FreeType version to run tests.\n"
         "E   AssertionError: assert 0.2 == 0\nlib/matplotlib/tests/test_axes.py:12: AssertionError\n1 failed",
         "pytest lib/matplotlib/tests/test_axes.py -k hist", "negative", "failure"),
    ],
)  # fmt: skip
def test_outputs_of_the_environment_are_no_verdict(text, command, verdict, rule) -> None:
    v = read_output(Observation(text=text, exit_code=2), "run", command,
                    ["src/match.c", "lib/matplotlib/axes/_axes.py"], set())  # fmt: skip
    assert (v.value, v.rule) == (verdict, rule), v


def _own_test_run(repair: tuple) -> Trajectory:
    fail = ("FAIL: test_optional (i18n.tests.TranslateURLTests)\nTraceback (most recent call last):\n"
            '  File "/testbed/tests/i18n/tests.py", line 394, in test_optional\n'
            '  File "/testbed/django/urls/base.py", line 180, in translate_url\n'
            "AssertionError: '/en/optional/foo' != '/en/optional/foo/'\nFAILED (failures=1)")  # fmt: skip
    return traj(
        bash("Read.", "cat django/urls/base.py", "def translate_url(path, lang_code):"),
        bash("Fix.", "sed -i 's/args=match.args/args=[a for a in match.args if a is not None]/' django/urls/base.py"),
        bash("Reproduce again.", "python reproduce_issue.py", "Translated URL (de): /foo/"),
        bash("Add a regression test.", "cat <<'EOF' >> tests/i18n/tests.py\nclass TranslateURLTests: ...\nEOF"),
        bash("Run the tests.", "python tests/runtests.py i18n.tests", fail, 1),
        repair,
        bash("Run the tests.", "python tests/runtests.py i18n.tests", "Ran 39 tests\nOK"),
        SUBMIT,
    )  # fmt: skip


def test_the_agents_own_test_repaired_without_touching_the_fix_said_nothing() -> None:
    """The new test expected a trailing slash; the agent corrects the test, not the fix, and the
    same run passes: the failure was the check's own (section 6), for the seats that read exit
    codes and outputs. Repairing the candidate instead leaves the failure an exposed error."""
    test_fix = bash(
        "My test expected the wrong slash.", "sed -i \"s|foo/')|foo')|\" tests/i18n/tests.py"
    )
    g = got(_own_test_run(test_fix))
    assert g["changes"] == g["commands"] == (1, True, "supports_pass")
    code_fix = bash(
        "The fix is incomplete.", "sed -i 's/url = reverse/url = reverse_lazy/' django/urls/base.py"
    )
    g = got(_own_test_run(code_fix))
    assert g["changes"] == g["commands"] == (1, True, "exposes_error")
