"""Auto-detection from the file name and first 64 KiB, on every real sample."""

from pathlib import Path

import pytest
from shared_data import TRAJECTORIES, params

from agentpost.errors import InputError
from agentpost.trajectory.importers import FORMATS, NotATrajectory, detect, get_importer
from agentpost.trajectory.importing import HEAD, iter_files

DATA = TRAJECTORIES

EXPECTED = {  # top folder (or file) → format
    "atif": "atif",
    "gemini-cli": "gemini-cli",
    "mini-swe-agent": "mini-swe-agent",
    "openai-chat": "openai-chat",
    "openhands/v0/tests": "openhands-v0",
    "openhands/harbor-rfc-0001": "openhands-v0",
    "openhands/v0/evaluation": "openhands-eval",
    "openhands/v1-sdk": "openhands-v1",
    "swe-agent": "swe-agent",
    "more-real/mini-swe-agent": "mini-swe-agent",
    "more-real/swe-agent": "swe-agent",
    "more-real/openhands/tests/runtime": "openhands-v0",
    "more-real/openhands/tests/unit/resolver": "openhands-eval",
    "more-real/openhands-sdk/tests/fixtures/llm_data": "openai-chat",
    "wave3/claude-code": "claude-code",
    "wave3/gemini-cli": "gemini-cli",
}
COMPANIONS = {
    "report.json",
    "all_preds.jsonl",
    "exit_statuses_1763508350.7320888.yaml",
    "example_model_output.json",  # SWE-bench predictions (model_patch)
    "base_state.json",  # OpenHands V1 conversation state without its events/
}


def _expected(path: Path) -> str:
    rel = path.relative_to(DATA).as_posix()
    return next(
        fmt
        for prefix, fmt in sorted(EXPECTED.items(), key=lambda kv: -len(kv[0]))
        if rel.startswith(prefix)
    )


@pytest.mark.parametrize(
    "path", params(lambda: iter_files([DATA])), ids=lambda p: p.name[:40] if p else "-"
)
def test_head_detection_on_real_samples(shared_data, path):
    head = path.read_bytes()[:HEAD]
    if path.name in COMPANIONS:
        with pytest.raises(NotATrajectory):
            detect(path, head)
    else:
        assert detect(path, head) == _expected(path)


def test_every_format_name_resolves():
    for name in FORMATS:
        module = get_importer(name)
        assert hasattr(module, "convert") or hasattr(module, "convert_lines")
    with pytest.raises(InputError):
        get_importer("no-such-format")
    with pytest.raises(InputError, match="'os.path' names no importer"):
        get_importer("os.path")  # a module, but not an importer


def test_empty_and_binary_heads_are_errors(tmp_path):
    with pytest.raises(InputError, match="empty file"):
        detect(tmp_path / "e.json", b"  \n")
    with pytest.raises(InputError, match="byte 3"):
        detect(tmp_path / "b.json", b'{"a\x00')


def test_odd_inputs_name_the_right_place(shared_data, tmp_path):
    """A byte-order mark is skipped; errors name the JSON path of a bare list and the line of
    an unknown JSONL file."""
    from agentpost.trajectory.importing import import_file

    gem = (DATA / "gemini-cli" / "harbor-rfc-0001" / "gemini-cli-trajectory.json").read_bytes()
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + gem)
    (t,) = import_file(tmp_path / "bom.json")
    assert (t.source.format, t.totals.input_tokens) == ("gemini-cli", 5915)
    cases = {
        "list.json": (b'[{"role": "user", "content": "hi"}, {"content": "x"}]', "$[1].role"),
        "rows.jsonl": (b'{"a": 1}\n{"b": 2}\n', "line 1"),
        "cont.json": (
            b'{"schema_version": "ATIF-v1.6", "steps": [], "continued_trajectory_ref"'
            b': "gone.json"}',
            "$.continued_trajectory_ref",
        ),
    }
    for name, (body, place) in cases.items():
        (tmp_path / name).write_bytes(body)
        with pytest.raises(InputError) as e:
            import_file(tmp_path / name)
        assert e.value.one_line().startswith(f"{tmp_path / name}: {place}: "), e.value.one_line()


def test_import_file_takes_a_string_path_and_refuses_other_types():
    """``import_file("x.jsonl")`` crashed in detection (``path.name`` on a str): a string is a
    path like a ``Path``; anything else is a TypeError that says what was given."""
    from agentpost.trajectory.importing import import_file

    synthetic = Path(__file__).resolve().parents[1] / "data" / "synthetic" / "claude-code"
    path = next(synthetic.rglob("*.jsonl"))
    by_str, by_path = import_file(str(path)), import_file(path)
    assert [t.model_dump() for t in by_str] == [t.model_dump() for t in by_path] and by_str
    with pytest.raises(TypeError, match="not bytes"):
        import_file(bytes(path))
