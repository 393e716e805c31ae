"""Rule gaps held-out v3 showed (issue 29, fifth round; v3 is tune since), each a class of
trajectories rather than one case (seats/3): the agent's reproduction package taken as the
candidate, a ``sed`` that matched nothing, a script written in one call and run in a later one
(behind a shell comment with an apostrophe), a script that crashed before writing, an edit that
only adds imports, commenting code out as the change, the wanted behaviour printed next to failure
words, a test that fails on purpose, and failures of other code in a test run. Synthetic
trajectories shaped like the real logs (not copied)."""

from __future__ import annotations

import pytest
from test_scvd_seat_gaps import SUBMIT, bash, got, traj

from agentpost.scvd import shell
from agentpost.scvd.changes import call_changes
from agentpost.scvd.reading import read_output
from agentpost.trajectory.model import Observation

SRC = "django/utils/autoreload.py"
LISTING = "autoreload.py\n__init__.py\nfunctional.py"


def roles(t) -> list[list[tuple[str, str]]]:
    return [[(c.path, c.role) for c in cc.changes] for cc in call_changes(t)]


def test_the_agents_reproduction_package_is_never_the_candidate() -> None:
    """``mkdir -p pkg/sub`` makes every new parent the agent's, so a module written later at the
    package's top (``reproduce_issue/__main__.py``) is scaffolding, not a new source file; a file
    under a directory named for reproduction is scratch even when the directory was listed."""
    t = traj(
        bash("Look around.", "ls django/utils/", LISTING),
        bash(
            "Make a package to reproduce.",
            "mkdir -p reproduce_issue/pkg/sub\n"
            "touch reproduce_issue/__init__.py reproduce_issue/pkg/__init__.py",
        ),  # fmt: skip
        bash("Module.", "cat <<'EOF' > reproduce_issue/pkg/sub/mod.py\nprint(1)\nEOF"),
        bash(
            "Run it.",
            "python3 -m reproduce_issue.pkg.sub.mod",
            "sys.argv: ['/testbed/reproduce_issue/pkg/sub/mod.py']",
        ),  # fmt: skip
        bash("A __main__ at the top.", "cat <<'EOF' > reproduce_issue/__main__.py\nprint(2)\nEOF"),
        bash("Run the package.", "python3 -m reproduce_issue", "__spec__.name: reproduce_issue"),
        bash("Now fix the source.", f"sed -i 's/spec.parent/spec.name/' {SRC}"),
        bash(
            "Run the reproduction again to verify the fix.",
            "python3 -m reproduce_issue",
            "__spec__.name: reproduce_issue.__main__",
        ),  # fmt: skip
        SUBMIT,
    )
    r = roles(t)
    assert r[4] == [("reproduce_issue/__main__.py", "scratch")]
    assert r[6] == [(SRC, "target")]
    assert set(got(t).values()) == {(6, True, "supports_pass")}
    # a listed directory named for reproduction: its files are still the agent's scaffolding
    t2 = traj(
        bash("Look.", "ls", "django\nreproduction\nsetup.py"),
        bash("Write into it.", "cat <<'EOF' > reproduction/run.py\nprint(1)\nEOF"),
    )
    assert roles(t2)[1] == [("reproduction/run.py", "scratch")]


def test_a_sed_whose_pattern_matched_nothing_is_not_the_candidate() -> None:
    """sed exits 0 whether or not its pattern matched; when the next read of the file still shows
    the pattern's text and not the replacement, the call changed nothing."""
    line = "        r'(?:\\S+(?::\\S*)?@)?'  # user:pass authentication"
    find = bash("Find the line.", "grep 'user:pass' django/core/validators.py", line)
    sub = bash("Replace it.", "sed -i \"s|r'(?:\\S+(?::\\S*)?@)?'|r'(?:[^\\s:@/]+)?'|\" "
               "django/core/validators.py")  # fmt: skip
    rerun = bash("Run the reproduction script again.", "python3 reproduce.py", "OK: rejected")
    t = traj(
        find,
        sub,
        bash("Check.", "grep 'user:pass' django/core/validators.py", line),
        bash(
            "It did not apply; replace the line by number.",
            "sed -i \"97c\\        r'(?:[^:@/]+)?'  # user:pass\" django/core/validators.py",
        ),  # fmt: skip
        rerun,
        SUBMIT,
    )
    chs = call_changes(t)
    assert not chs[1].applied and chs[3].applied
    assert {a[0] for a in got(t).values()} == {3}
    # the same sed, but the read shows the replacement: it applied
    shown = "        r'(?:[^\\s:@/]+)?'  # user:pass authentication"
    t2 = traj(find, sub, bash("Check.", "grep 'user:pass' django/core/validators.py", shown), rerun,
              SUBMIT)  # fmt: skip
    assert call_changes(t2)[1].applied
    assert {a[0] for a in got(t2).values()} == {1}


def test_a_script_written_behind_a_comment_and_run_later_is_the_candidate() -> None:
    """A shell comment's apostrophe opens no quote: the heredoc after it is read, and the later
    ``python3 apply_fix.py`` that opens the tracked file for writing is the edit."""
    body = ("import sys\nfile_path = 'django/core/cache/backends/db.py'\n"
            "content = open(file_path).read()\nwith open(file_path, 'w') as f:\n"
            "    f.write(content.replace('a', 'b'))\nprint('Fix applied')")  # fmt: skip
    cmd = f"# I'll use a script because multiline sed is tricky.\ncat <<'EOF' > apply_fix.py\n{body}\nEOF"
    assert len(shell.split_segments(cmd)) == 1 and shell.heredoc_files(shell.split_segments(cmd)[0])
    t = traj(
        bash("Look.", "sed -n '260,275p' django/core/cache/backends/db.py", "cursor.execute(...)"),
        bash("Write the fixer.", cmd),
        bash("Apply it.", "python3 apply_fix.py", "Fix applied"),
        bash("Run the reproduction script again.", "python3 reproduce_issue.py", "Success"),
        SUBMIT,
    )
    assert roles(t)[2] == [("django/core/cache/backends/db.py", "target")]
    assert set(got(t).values()) == {(2, True, "supports_pass")}
    # the same script crashing before its write (exit 1, its own traceback) applied nothing
    crash = ('Traceback (most recent call last):\n  File "apply_fix.py", line 3, in <module>\n'
             "UnicodeDecodeError: 'ascii' codec can't decode byte 0xe2")  # fmt: skip
    t2 = traj(bash("Look.", "cat django/core/cache/backends/db.py", "x"),
              bash("Write the fixer.", cmd), bash("Apply it.", "python3 apply_fix.py", crash, 1))  # fmt: skip
    assert not call_changes(t2)[2].applied


def test_an_edit_that_only_adds_imports_prepares_the_attempt() -> None:
    """An import added first, checked, and the real change made later: the attempt is the later
    change. An import-only edit that nothing follows is still the candidate."""
    imp = bash("Import Promise first.", "sed -i '/import types/a from django.utils.functional "
               "import Promise' django/template/defaultfilters.py")  # fmt: skip
    t = traj(
        bash("Look.", "head django/template/defaultfilters.py", "import types"),
        imp,
        bash("Run the reproduction.", "python3 reproduce.py", "Case 1: ''"),
        bash(
            "Now the change.",
            "sed -i 's/return value + arg/return str(value) + str(arg)/' "
            "django/template/defaultfilters.py",
        ),  # fmt: skip
        bash("Run the reproduction script again.", "python3 reproduce.py", "Case 1: 'ab'"),
        SUBMIT,
    )
    assert roles(t)[1] == [("django/template/defaultfilters.py", "target")]
    assert {a[0] for a in got(t).values()} == {3}
    t2 = traj(bash("Look.", "head django/template/defaultfilters.py", "import types"),
              imp, bash("Run the reproduction script again.", "python3 reproduce.py", "ok"), SUBMIT)  # fmt: skip
    assert {a[0] for a in got(t2).values()} == {1}


@pytest.mark.parametrize(
    "step",
    [bash("Comment the clause out.", "sed -i '1244,1247s/^/#/' astropy/table/table.py"),
     bash("Comment it out.", "sed -i '10,12s/^\\(\\s*\\)/\\1# /' astropy/table/table.py"),
     ("Comment it out.", "str_replace_based_edit_tool",
      {"command": "str_replace", "path": "/testbed/astropy/table/table.py",
       "old_str": "    data = data.view(Mixin)\n    is_mixin = True",
       "new_str": "    # data = data.view(Mixin)\n    # is_mixin = True"},
      "The file has been edited.", None)],
)  # fmt: skip
def test_commenting_code_out_is_a_change_of_the_target(step) -> None:
    """Putting a comment marker before code lines disables them: a change, not a comment-only
    (cosmetic) edit. Adding a new comment stays cosmetic."""
    t = traj(
        bash("Look.", "nl -ba astropy/table/table.py | sed -n '1240,1250p'", "data.view(Mixin)"),
        step,
        bash("Run the reproduction script again.", "python3 reproduce_issue.py", "Column"),
        SUBMIT,
    )
    assert [r for _, r in roles(t)[1]] == ["target"]
    assert {a[0] for a in got(t).values()} == {1}
    t2 = traj(bash("Look.", "cat astropy/table/table.py", "x = 1"),
              bash("Note.", "sed -i '3a # a note about the mixin' astropy/table/table.py"))  # fmt: skip
    assert [r for _, r in roles(t2)[1]] == ["cosmetic"]


def read(text: str, command: str = "python3 reproduce_issue.py", code: int = 0, changed=None):
    obs = Observation(call_id="c", text=text, exit_code=code)
    return read_output(obs, "run", command, changed or ["django/template/library.py"], set())


def test_the_expected_error_with_a_quoted_unexpected_in_its_message_is_a_pass() -> None:
    """'unexpected' vetoes an expected-exception reading only as a judgement of the outcome
    ("Unexpected success"), not inside the message the check expected."""
    ok = (
        "Case 2 Caught expected error: 'hi' received multiple values for keyword argument 'g'\n"
        "Case 3 Caught expected error: 'hi' received unexpected keyword argument 'unexpected'\n"
    )
    assert read(ok).rule == "expected-exception" and read(ok).value == "positive"
    bad = "Case 2 Unexpected Success: {'g': 1}\nCase 3 Caught expected error: x\nerror: y"
    assert read(bad).value == "negative"


PYTEST_HEAD = ("============================= test session starts ==============================\n"
               "collected 1 item\n\nreproduce_issue.py F                    [100%]\n\n"
               "=================================== FAILURES ===================================\n")  # fmt: skip


def test_a_test_that_fails_on_purpose_shows_its_output_and_is_not_a_failure() -> None:
    """The bug report's own test ends in ``assert 0`` so that pytest prints its headline: that
    failure is the device, the headline is what to read."""
    text = PYTEST_HEAD + ("________________________________ test_boo[..[] _________________________________\n\n"
                          "    def test_boo(a):\n>       assert 0\nE       assert 0\n\n"
                          "reproduce_issue.py:5: AssertionError\n"
                          "============================== 1 failed in 0.03s ===============================")  # fmt: skip
    assert (
        read(text, "python3 -m pytest reproduce_issue.py", 1, ["src/_pytest/python.py"]).value
        == "positive"
    )
    real = text.replace("assert 0\nE       assert 0", "assert item.getmodpath() == 'test_boo[..[]'\n"
                        "src/_pytest/python.py:306: in getmodpath\nE       assert 'test_boo[.[]' == 'test_boo[..[]'")  # fmt: skip
    assert (
        read(real, "python3 -m pytest reproduce_issue.py", 1, ["src/_pytest/python.py"]).value
        == "negative"
    )


COLORS = ["lib/matplotlib/colors.py"]


def _colors_run(section: str) -> str:
    return (PYTEST_HEAD.replace("reproduce_issue.py F", "lib/matplotlib/tests/test_colors.py ..F..")
            + "______________________ test_double_register_builtin_cmap _______________________\n\n"
            + section + "\n=========================== short test summary info ============================\n"
            "FAILED lib/matplotlib/tests/test_colors.py::test_double_register_builtin_cmap\n"
            "================== 1 failed, 250 passed in 13.99s ===================")  # fmt: skip


@pytest.mark.parametrize(
    ("section", "want"),
    [(">       with pytest.warns(UserWarning):\nE       matplotlib._api.deprecation.MatplotlibDeprecationWarning: "
      "The register_cmap function was deprecated\n\nlib/matplotlib/tests/test_colors.py:142: "
      "MatplotlibDeprecationWarning", "void"),
     ('Traceback (most recent call last):\n  File "/testbed/lib/matplotlib/tests/test_colors.py", line 9, in t\n'
      '    e = parse_expr("-B*A")\n  File "/testbed/lib/matplotlib/parsing.py", line 1006, in parse_expr\n'
      "ValueError: Name node can't be used with 'False' constant", "void"),
     (">       assert cmap(0.5) == (1, 0, 0)\nE       assert (0, 0, 1) == (1, 0, 0)\n\n"
      "lib/matplotlib/tests/test_colors.py:142: AssertionError", "negative"),
     (">       cmap(0.5)\n\nlib/matplotlib/colors.py:731: in __call__\n    xa[xa > N] = self._i_over\n"
      "E       OverflowError: Python integer 257 out of bounds for uint8\n\n"
      "lib/matplotlib/colors.py:731: OverflowError", "negative")],
)  # fmt: skip
def test_failures_of_other_code_in_a_test_run_of_the_changed_module(section, want) -> None:
    """A run of the changed module's own test file, whose every failure is a warning turned error
    or an exception raised in other source with no frame in a changed file, says nothing about the
    candidate; a failing assertion or a frame in a changed file does."""
    got_ = read(_colors_run(section), "pytest lib/matplotlib/tests/test_colors.py", 1, COLORS)
    assert got_.value == want, got_


def test_a_debug_print_removed_is_no_candidate_and_a_quick_revert_restarts() -> None:
    """A ``sed`` whose replacement is its pattern less a debug print removes instrumentation (as
    an editor edit that only deletes print lines does); a ``git checkout`` of the file followed by
    a new change with no check between restarts the same attempt, which ends at the new change."""
    f = "sphinx/builders/linkcheck.py"
    t = traj(
        bash("Look.", f"sed -n '100,120p' {f}", "            return 'local', '', 0"),
        bash(
            "Instrument.",
            f"sed -i \"s/return 'local', '', 0/print(f'DEBUG: {{uri}}'); "
            f"return 'local', '', 0/\" {f}",
        ),  # fmt: skip
        bash("Run.", "cd repro && sphinx-build -b linkcheck . _build", "DEBUG: x"),
        bash(
            "Remove the print.",
            f"sed -i \"s/print(f'DEBUG: {{uri}}'); return 'local', '', 0/"
            f"return 'local', '', 0/\" {f}",
        ),  # fmt: skip
        bash("Patch.", f"sed -i \"s/return 'local', '', 0/return self.check_local(uri)/\" {f}"),
        bash("Start over.", f"git checkout {f}"),
        bash("Patch again.", f"sed -i \"s/return 'local', '', 0/return self.local(uri)/\" {f}"),
        bash(
            "Run the reproduction again to verify the fix.",
            "cd repro && sphinx-build -b linkcheck . _build",
            "ok",
        ),  # fmt: skip
        SUBMIT,
    )
    r = roles(t)
    assert r[1] == [(f, "debug")] and r[3] == [(f, "debug")] and r[4] == [(f, "target")]
    assert {a[0] for a in got(t).values()} == {6}
    # a revert after a check ends the attempt as before
    t2 = traj(
        bash("Look.", f"sed -n '100,120p' {f}", "            return 'local', '', 0"),
        bash("Patch.", f"sed -i \"s/return 'local', '', 0/return self.check_local(uri)/\" {f}"),
        bash("Run the reproduction.", "cd repro && sphinx-build -b linkcheck . _build", "broken"),
        bash("Start over.", f"git checkout {f}"),
        bash("Patch again.", f"sed -i \"s/return 'local', '', 0/return self.local(uri)/\" {f}"),
        SUBMIT,
    )
    assert {a[0] for a in got(t2).values()} == {1}


@pytest.mark.parametrize(
    ("text", "command", "code", "rule"),
    [("python3: can't open file '/testbed/test_other.py': [Errno 2] No such file or directory",
      "python3 test_other.py", 2, "check-setup"),
     ("collected 891 items / 891 deselected / 0 selected\n=== 891 deselected in 6.86s ===",
      "pytest xarray/tests/test_dataarray.py -k integrate", 5, "environment"),
     ('Traceback (most recent call last):\n  File "/testbed/test_fix.py", line 26, in <module>\n'
      '  File "/usr/lib/python3.9/unittest/mock.py", line 630, in __getattr__\n'
      "AttributeError: Mock object has no attribute 'srcdir'", "python3 test_fix.py", 1,
      "check-setup")],
)  # fmt: skip
def test_a_check_that_checked_nothing_is_void(text, command, code, rule) -> None:
    """A check script the interpreter cannot open, a test selection that selected nothing
    (pytest's exit 5), a check's own mock missing an attribute: nothing was checked."""
    v = read(text, command, code, ["xarray/core/dataarray.py"])
    assert (v.value, v.rule) == ("void", rule)
