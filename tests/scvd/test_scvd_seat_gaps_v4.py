"""Rule gaps held-out v4 showed (issue 29, sixth round; v4 is tune since), each a class of checks
that fail without saying anything about the candidate (seats/4): a package the environment lacks,
imported by repository source the candidate did not change; a test of other code whose traceback
only shares a word with the changed module (``self.engine``); the repository's own test file run
directly (``python test_requests.py``) whose failure names nothing changed; an inline probe of the
language or its standard library (``python -c "print('abc'.isascii())"``). Synthetic outputs and
trajectories shaped like the real logs (not copied)."""

from __future__ import annotations

from test_scvd_seat_gaps import SUBMIT, bash, got, traj

from agentpost.scvd.reading import read_output
from agentpost.trajectory.model import Observation

ARRAY = ["django/contrib/postgres/forms/array.py"]


def read(text: str, command: str, code: int, changed: list[str], scripts=frozenset()):
    obs = Observation(call_id="c", text=text, exit_code=code)
    return read_output(obs, "run", command, changed, set(scripts))


def _import_fails(module: str, raiser: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "check_widget.py", line 1, in <module>\n'
        "    from django.contrib.postgres.forms.array import SplitArrayWidget\n"
        '  File "/testbed/django/contrib/postgres/forms/__init__.py", line 4, in <module>\n'
        "    from .ranges import *  # NOQA\n"
        f'  File "/testbed/{raiser}", line 1, in <module>\n'
        f"    from {module}.extras import DateRange\n"
        f"ModuleNotFoundError: No module named '{module}'"
    )


def test_a_package_the_environment_lacks_says_nothing_even_on_the_changed_modules_import() -> None:
    """The check imports the changed module; the repository's own source (not a changed file)
    then imports a third-party package that is not installed: the environment, not the candidate.
    A module of the repository's own package that is missing, or a missing import raised from a
    changed file, is still the candidate's."""
    env = _import_fails("psycopg2", "django/contrib/postgres/forms/ranges.py")
    v = read(env, "python check_widget.py", 1, ARRAY)
    assert (v.value, v.rule) == ("void", "environment")
    own = _import_fails("psycopg2", "django/contrib/postgres/forms/array.py")
    assert read(own, "python check_widget.py", 1, ARRAY).value == "negative"
    repo = _import_fails(
        "django.contrib.postgres.fields2", "django/contrib/postgres/forms/ranges.py"
    )
    assert read(repo, "python check_widget.py", 1, ARRAY).value == "negative"


ENGINE = ["django/template/engine.py"]


def _unittest_fail(test: str, frame: str, line: str, error: str) -> str:
    return (
        "Testing against Django installed in '/testbed/django' with up to 8 processes\n"
        "System check identified no issues (0 silenced).\n" + "." * 300 + "F" + "." * 40 + "\n"
        "======================================================================\n"
        f"FAIL: {test}\n"
        "----------------------------------------------------------------------\n"
        "Traceback (most recent call last):\n"
        f'  File "{frame}", line 195, in test_permissions_error\n'
        f"    {line}\n"
        '  File "/usr/lib/python3.6/unittest/case.py", line 203, in __exit__\n'
        f"{error}\n\n"
        "----------------------------------------------------------------------\n"
        "Ran 1369 tests in 3.330s\n\nFAILED (failures=1, skipped=1)"
    )


def test_a_word_shared_with_the_changed_module_is_not_a_mention_of_it() -> None:
    """``self.engine.get_template`` in a loader test's traceback names an attribute, not the
    changed module ``template/engine.py``: the run's one failure is of other code. The module
    named as a path, as ``template.engine``, or its own test module ``test_engine`` is about it."""
    loader = "template_tests.test_loaders.FileSystemLoaderTests"
    text = _unittest_fail(f"test_permissions_error ({loader})",
                          "/testbed/tests/template_tests/test_loaders.py",
                          "self.engine.get_template(tmpfile.name)",
                          "AssertionError: PermissionError not raised")  # fmt: skip
    cmd = "python3 tests/runtests.py template_tests"
    v = read(text, cmd, 1, ENGINE)
    assert (v.value, v.rule) == ("void", "unrelated-failure")
    for named in (
        text.replace("tests/template_tests/test_loaders.py", "django/template/engine.py"),
        text.replace("test_loaders.FileSystemLoaderTests", "test_engine.EngineTests"),
        text.replace("self.engine.get_template", "django.template.engine.Engine().get_template"),
    ):
        assert read(named, cmd, 1, ENGINE).value == "negative"


SESSIONS = ["requests/sessions.py"]
REQUESTS_RUN = (
    "/testbed/test_requests.py:245: ResourceWarning: unclosed <socket.socket fd=3>\n"
    + "." * 60 + "E" + "." * 57 + "\n"
    "======================================================================\n"
    "ERROR: test_conflicting_post_params (__main__.RequestsTestCase)\n"
    "----------------------------------------------------------------------\n"
    "Traceback (most recent call last):\n"
    '  File "/testbed/test_requests.py", line 387, in test_conflicting_post_params\n'
    "    pytest.raises(ValueError, \"requests.post(url, data='[]', files={'some': f})\")\n"
    '  File "/usr/lib/python3.9/site-packages/_pytest/python_api.py", line 950, in raises\n'
    "TypeError: 'requests.post(url)' object (type: <class 'str'>) must be callable\n\n"
    "----------------------------------------------------------------------\n"
    "Ran 118 tests in 39.439s\n\nFAILED (errors=1)"
)  # fmt: skip


def test_the_repositorys_own_test_file_run_directly_is_a_test_run() -> None:
    """``python3 test_requests.py`` runs the repository's test module (not one of the agent's
    scripts): a failure of it that names no changed file is of other code. The same output from
    the agent's own script stays a failure."""
    v = read(REQUESTS_RUN, "python3 test_requests.py", 1, SESSIONS)
    assert (v.value, v.rule) == ("void", "unrelated-failure")
    mine = read(REQUESTS_RUN, "python3 test_requests.py", 1, SESSIONS, {"test_requests.py"})
    assert mine.value == "negative"
    named = REQUESTS_RUN.replace("_pytest/python_api.py", "requests/sessions.py")
    named = named.replace("/usr/lib/python3.9/site-packages/", "/testbed/")
    assert read(named, "python3 test_requests.py", 1, SESSIONS).value == "negative"


TEXT = "sklearn/feature_extraction/text.py"
PROBE_FAIL = (
    'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
    "AttributeError: 'str' object has no attribute 'isascii'"
)


def test_an_inline_probe_of_the_language_says_nothing_about_the_candidate() -> None:
    """``python -c`` code that imports nothing of the repository and names no changed file probes
    the interpreter or its standard library: no seat reads its failure against the candidate. The
    same one-liner importing the changed module is a check."""
    probe = "python3 -c \"print('abc'.isascii())\""
    v = read(PROBE_FAIL, probe, 1, [TEXT])
    assert (v.value, v.rule) == ("void", "probe")
    check = "python3 -c \"from sklearn.feature_extraction.text import strip_accents_unicode as s; s('x')\""
    assert read(PROBE_FAIL, check, 1, [TEXT]).value == "negative"
    t = traj(
        bash("Reproduce.", "python3 reproduce_issue.py", "s1 -> n\ns2 -> ñ"),
        bash("Fix it.", f"sed -i '133,136c\\    return \"\".join(c for c in n)' {TEXT}"),
        bash(
            "Run the reproduction script again to verify the fix.",
            "python3 reproduce_issue.py",
            "s1 -> n\ns2 -> n",
        ),
        bash(
            "The reproduction works now. Could isascii make it faster? Let me try.",
            probe,
            PROBE_FAIL,
            1,
        ),
        bash(
            "It failed: isascii is missing. Which Python is it?",
            "python3 --version",
            "Python 3.6.13",
        ),
        SUBMIT,
    )
    assert set(got(t).values()) == {(1, True, "supports_pass")}


PERM = ["sympy/combinatorics/permutations.py"]
PR_RAISES = (
    "<pr_description>\nConsider the following PR description:\n`Permutation` constructor fails with "
    "non-disjoint cycles\nCalling `Permutation([[0,1],[0,1]])` raises a `ValueError` instead of "
    "constructing the identity permutation.\n</pr_description>"
)
SYMPY_RUN = (
    "============================= test process starts ==============================\n"
    "sympy/combinatorics/tests/test_permutations.py[9] ....F....               [FAIL]\n\n"
    "________________________________________________________________________________\n"
    "___________ sympy/combinatorics/tests/test_permutations.py:test_args ___________\n"
    '  File "/testbed/sympy/combinatorics/tests/test_permutations.py", line 352, in test_args\n'
    "    raises(ValueError, lambda: Permutation([[1], [1, 2]]))\n"
    '  File "/testbed/sympy/utilities/pytest.py", line 81, in raises\n'
    '    raise AssertionError("DID NOT RAISE")\nAssertionError: DID NOT RAISE\n\n'
    "============= tests finished: 8 passed, 1 failed, in 0.09 seconds =============="
)


def test_a_test_asserting_the_exception_the_request_removes_says_nothing() -> None:
    """The request complains that a call *raises* an exception; a test that now fails only because
    that exception is no longer raised encodes the behaviour the request changes (the label rule in
    real-labels.md): void for the reader of outputs. Another exception not raised, a failure of
    another kind beside it, or a request that asks for the raise, stay failures."""
    from agentpost.scvd.reading import unwanted_raises

    assert unwanted_raises(PR_RAISES) == {"ValueError"}
    assert unwanted_raises(PR_RAISES.replace("raises a", "should raise a")) == set()
    cmd = "python bin/test sympy/combinatorics/tests/test_permutations.py"
    obs = Observation(call_id="c", text=SYMPY_RUN, exit_code=1)
    v = read_output(obs, "run", cmd, PERM, set(), unwanted={"ValueError"})
    assert (v.value, v.rule) == ("void", "removed-behaviour")
    assert read_output(obs, "run", cmd, PERM, set()).value == "negative"
    other = SYMPY_RUN.replace("raises(ValueError", "raises(TypeError")
    obs2 = Observation(call_id="c", text=other, exit_code=1)
    assert read_output(obs2, "run", cmd, PERM, set(), unwanted={"ValueError"}).value == "negative"
    unittest = ("FAIL: test_args (tests.test_permutations.PermTests)\n" + "-" * 70 + "\n"
                "Traceback (most recent call last):\n  File \"/testbed/tests/test_permutations.py\", "
                "line 9, in test_args\n    Permutation([[1], [1, 2]])\nAssertionError: ValueError "
                "not raised\n\n" + "-" * 70 + "\nRan 9 tests in 0.1s\n\nFAILED (failures=1)")  # fmt: skip
    obs3 = Observation(call_id="c", text=unittest, exit_code=1)
    assert read_output(obs3, "run", cmd, PERM, set(), unwanted={"ValueError"}).value == "void"
    t = traj(
        bash("Fix.", f"sed -i '899,901c\\            pass' {PERM[0]}"),
        bash("Run the tests to verify the fix.", cmd, SYMPY_RUN, 1),
        bash(
            "It seems I broke test_args, but the existing test was enforcing the old behavior "
            "the PR asks to change.",
            "sed -n '345,360p' sympy/combinatorics/tests/test_permutations.py",
            "    raises(ValueError, lambda: Permutation([[1], [1, 2]]))",
        ),
        SUBMIT,
        instruction=PR_RAISES,
    )
    seats = got(t)
    assert seats["commands"] == (0, True, "supports_pass")
    assert seats["narration"] == (0, True, "supports_pass")


SETS = ["sympy/sets/sets.py"]
BROKEN = (
    "    def _contains(self, element):\n    def _eval_is_subset(self, other):\n"
    "        if isinstance(other, ProductSet):\n            return False\n        return None\n\n"
    '        """\n        \'in\' operator for ProductSets.\n'
)


def test_a_listing_of_a_block_left_without_its_body_is_a_failure() -> None:
    """An inspection of a changed Python file whose listing shows a block opener (``def``,
    ``if``, ...) followed at once by a line no deeper than it: the file no longer compiles, which
    a reader sees without running it. Line-numbered listings are read too; a listing that ends on
    the opener, or a well-formed block, is no failure."""

    def look(text: str, command: str = "sed -n '780,800p' sympy/sets/sets.py"):
        return read_output(
            Observation(call_id="c", text=text, exit_code=0), "inspect", command, SETS
        )

    v = look(BROKEN)
    assert (v.value, v.rule) == ("negative", "broken-block")
    numbered = "\n".join(f"   {780 + i}\t{ln}" for i, ln in enumerate(BROKEN.splitlines()))
    assert look(numbered, "nl -ba sympy/sets/sets.py | sed -n '780,800p'").value == "negative"
    nested = BROKEN.replace("    def _eval_is_subset", "        pass\n\n    def _eval_is_subset")
    assert look(nested).value == "positive"
    assert look("        if not self:\n").value == "positive"  # the listing ends on the opener
    odd = "        if not self:\n        return other == 0\n"
    assert look(odd).value == "negative"
    assert look(odd, "sed -n '1,5p' docs/notes.txt").value == "positive"  # not a changed file


def test_a_debug_print_appended_after_a_spaced_backslash_is_instrumentation() -> None:
    """``sed -i "/pat/a \\        print(f'DEBUG: ...')"`` (a space between the command letter
    and its backslash) adds only a debug print: instrumentation, not the first candidate; the
    later edit of the same file is."""
    f = "sphinx/ext/autodoc/typehints.py"
    t = traj(
        bash(
            "Build the reproduction.", "sphinx-build -b html repro repro/_build", "build succeeded."
        ),
        bash(
            "Add a debug print.",
            f'sed -i "/field_name = field\\[0\\].astext()/a \\        '
            f"print(f'DEBUG: field_name={{field_name}}')\" {f}",
        ),
        bash(
            "Build again.",
            "sphinx-build -b html repro repro/_build2",
            "DEBUG: field_name=returns\nbuild succeeded.",
        ),
        bash("Remove the debug print.", f'sed -i "/print(f\'DEBUG: field_name/d" {f}'),
        bash(
            "Now fix it.",
            f"sed -i \"152s/parts\\[0\\] == 'return':/parts[0] in ('return', 'returns'):/\" {f}",
        ),
        bash(
            "Rebuild to verify the fix.",
            "sphinx-build -b html repro repro/_build3",
            "build succeeded.",
        ),
        SUBMIT,
    )
    assert roles(t)[1] == [(f, "debug")]
    assert {a[0] for a in got(t).values()} == {4}


def roles(t) -> list[list[tuple[str, str]]]:
    from agentpost.scvd.changes import call_changes

    return [[(c.path, c.role) for c in cc.changes] for cc in call_changes(t)]


def test_a_grep_that_confirms_the_edit_applied_is_part_of_the_construction() -> None:
    """A ``grep`` for the text a ``sed s`` just replaced, or for its replacement, only confirms
    that the edit applied; followed by a further edit of the same file with no run between, the
    attempt goes on (every seat). A grep followed by a run, or by nothing more, still ends it."""
    f = "django/contrib/admin/filters.py"
    t = traj(
        bash("Reproduce.", "python reproduce_issue.py", "ordering: ()"),
        bash("Step 1: default ordering None.", f"sed -i 's/ordering = ()/ordering = None/' {f}"),
        bash("It failed? Maybe grep failed.", f'grep "ordering = ()" {f}', "", 1),
        bash("Let's verify.", f'grep "ordering = None" {f}', "        ordering = None"),
        bash(
            "Step 2: fall back to Meta.ordering.",
            f"sed -i 's/ordering=ordering)/ordering=ordering or model._meta.ordering)/' {f}",
        ),
        bash(
            "Run the reproduction script again to verify the fix.",
            "python reproduce_issue.py",
            "ordering: ['name']",
        ),
        SUBMIT,
    )
    assert {a[0] for a in got(t).values()} == {4}
    cut = traj(
        bash("Reproduce.", "python reproduce_issue.py", "ordering: ()"),
        bash("Default ordering None.", f"sed -i 's/ordering = ()/ordering = None/' {f}"),
        bash("Let's verify.", f'grep "ordering = None" {f}', "        ordering = None"),
        bash(
            "Run the reproduction script again to verify the fix.",
            "python reproduce_issue.py",
            "ordering: ()",
        ),
        bash(
            "Fall back to Meta.ordering.",
            f"sed -i 's/ordering=ordering)/ordering=ordering or model._meta.ordering)/' {f}",
        ),
        SUBMIT,
    )
    assert {a[0] for a in got(cut).values()} == {1}


FILTERS = ["django/contrib/admin/filters.py"]
NO_TABLE = (
    "Traceback (most recent call last):\n"
    '  File "verify_changelist_ordering.py", line 50, in <module>\n    cl.get_results(request)\n'
    '  File "/testbed/django/contrib/admin/views/main.py", line 209, in get_results\n'
    '  File "/testbed/django/db/models/sql/compiler.py", line 1098, in execute_sql\n'
    '  File "/testbed/django/db/backends/sqlite3/base.py", line 396, in execute\n'
    "django.db.utils.OperationalError: no such table: reproduce_app_author"
)
MISSING_ARG = (
    "Traceback (most recent call last):\n"
    '  File "verify_changelist_ordering.py", line 50, in <module>\n'
    "    cl = ChangeList(request, Author, ma.list_display)\n"
    "TypeError: __init__() missing 1 required positional argument: 'sortable_by'"
)


def test_the_checks_own_setup_failing_inside_unchanged_source_says_nothing() -> None:
    """The check's database has no table (its fixture was never migrated), however deep in the
    unchanged ORM the error surfaces; the check calls an API with a missing argument, raised at
    its own call: both are the check's own setup. Through a changed file, or a missing argument
    reported without a traceback, they stay failures."""
    scripts = {"verify_changelist_ordering.py"}
    cmd = "python3 verify_changelist_ordering.py"
    v = read(NO_TABLE, cmd, 1, FILTERS, scripts)
    assert (v.value, v.rule) == ("void", "check-setup")
    through = NO_TABLE.replace("views/main.py", "filters.py")
    assert read(through, cmd, 1, FILTERS, scripts).value == "negative"
    v = read(MISSING_ARG, cmd, 1, FILTERS, scripts)
    assert (v.value, v.rule) == ("void", "check-setup")
    inner = MISSING_ARG.replace(
        "TypeError", '  File "/testbed/django/contrib/admin/filters.py", line 9, in f\nTypeError'
    )
    assert read(inner, cmd, 1, FILTERS, scripts).value == "negative"


def test_deleting_the_line_a_debug_print_was_inserted_at_is_instrumentation() -> None:
    """``sed -i '1864a\\ print(DEBUG)'`` puts a debug print on line 1865; a later ``sed -i
    '1865d'`` of the same file deletes exactly that line: undoing instrumentation, not the
    candidate. Deleting another line is a change of the target."""
    f = "sympy/core/numbers.py"
    dbg = 'print(f"DEBUG: self={self} other={other}")'
    probe = 'python -c "from sympy import S; print(S(0) == False)"'
    t = traj(
        bash("Debug.", f"sed -i '1864a\\        {dbg}' {f}"),
        bash("Run.", probe, "DEBUG: self=0 other=False\nTrue"),
        bash("Remove it.", f"sed -i '1865d' {f}"),
        bash("Debug elsewhere.", f"sed -i '1863i\\        {dbg}' {f}"),
        bash("Run.", probe, "True"),
        bash("Remove it.", f"sed -i '1863d' {f}"),
        bash(
            "Fix Float.__eq__.",
            f"sed -i '1390,1393c\\        if isinstance(other, Boolean):\\n"
            f"            return False' {f}",
        ),
        bash(
            "Run the reproduction script again to verify the fix.",
            "python reproduce_issue.py",
            "S(0.0) == S.false: False",
        ),
        SUBMIT,
    )
    r = roles(t)
    assert r[2] == [(f, "debug")] and r[5] == [(f, "debug")]
    assert {a[0] for a in got(t).values()} == {6}
    other = traj(
        bash("Debug.", f"sed -i '1864a\\        {dbg}' {f}"),
        bash("Run.", probe, "DEBUG: self=0 other=False\nTrue"),
        bash("Remove a line.", f"sed -i '1870d' {f}"),
    )
    assert roles(other)[2] == [(f, "target")]


def test_a_debug_print_behind_a_one_line_guard_is_instrumentation() -> None:
    """``if "_backend_mod" in globals(): print(f"DEBUG: ...")`` only prints: instrumentation like a
    bare print, so the attempt starts at the first edit that changes behaviour."""
    f = "lib/matplotlib/pyplot.py"
    t = traj(
        bash("Debug.", f"sed -i '223i\\    if \"_backend_mod\" in globals(): print(f\"DEBUG: {{_backend_mod}}\")' {f}"),
        bash("Run.", "python reproduce_issue.py", "DEBUG: <module>\nBefore: 1 After: 0"),
        bash("Guard it more.", f"sed -i \"224s/print.*/if _backend_mod: print(f'DEBUG: {{_backend_mod}}')/\" {f}"),
        bash("Run.", "python reproduce_issue.py", "Before: 1 After: 0"),
        bash("Fix: return early.", f"sed -i '262,263c\\    if _backend_mod is not None:\\n        return' {f}"),
        bash("Run the reproduction script again to verify the fix.", "python reproduce_issue.py",
             "Before: 1 After: 1"),
        SUBMIT,
    )  # fmt: skip
    r = roles(t)
    assert r[0] == [(f, "debug")] and r[2] == [(f, "debug")]
    assert {a[0] for a in got(t).values()} == {4}
