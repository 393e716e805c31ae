"""A model seat on the real llama.cpp server (issue 29): a tiny Llama built here, written as GGUF,
served by llama.cpp's OpenAI-compatible server, judges SCVD trajectories beside two rule seats.
The request carries a JSON schema (llama.cpp turns it into a grammar), so even a random tiny model
writes a valid annotation ("no candidate"); the panel votes, the records say the seat was a model,
and the study is re-scored from the recorded replies after the server is gone. Skips where
llama-cpp-python is not installed (``bash scripts/setup.sh --llama`` builds it)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from agentpost.judges.config import build_panel  # noqa: E402
from agentpost.lab import server  # noqa: E402
from agentpost.scvd.calibrate_io import BUNDLED_LABELS, calibrate_files, read_labels  # noqa: E402
from agentpost.scvd.pipeline import DiagnoseOptions, diagnose  # noqa: E402

pytestmark = pytest.mark.skipif(
    not server.available(), reason="llama-cpp-python is not installed (setup.sh --llama)"
)
KEY = "AGENTPOST_TEST_LLAMA_KEY"
CASES = ["edge::explore-only", "tar-backup::scripted/hasty::0"]
NO_CANDIDATE = {"case_id": "x", "task_name": "x", "candidate_formed": False, "candidate_step": None,
                "candidate_tool_call_index": None, "boundary_type": None,
                "verification_triggered": False, "verification_outcome": None}  # fmt: skip
SCHEMA = {
    "type": "object",
    "properties": {
        k: ({"enum": [v]} if v is not None else {"type": "null"}) for k, v in NO_CANDIDATE.items()
    },
    "required": list(NO_CANDIDATE),
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def gguf(tmp_path_factory):
    from agentpost.lab.gguf import write_gguf
    from agentpost.lab.policy import PolicySize, lab_llama, train_tokenizer

    d = tmp_path_factory.mktemp("llama-judge")
    tok = train_tokenizer(
        [json.dumps(NO_CANDIDATE), "ls -la", "cat file.txt"] * 20, 300, llama_compatible=True
    )  # served by llama.cpp: GPT-2 pieces
    size = PolicySize(hidden=64, layers=2, heads=4, intermediate=128, max_positions=16384)
    return write_gguf(lab_llama(tok, seed=0, size=size), tok, d / "judge.gguf")


def test_llama_seat_in_the_panel_then_recorded(gguf, tmp_path, monkeypatch) -> None:
    _, _, trajs = read_labels(BUNDLED_LABELS)
    chosen = [trajs[c] for c in CASES]
    monkeypatch.setenv(KEY, "EMPTY")
    rules = [{"id": "rules-changes", "kind": "heuristic", "variant": "changes"},
             {"id": "rules-commands", "kind": "heuristic", "variant": "commands"}]  # fmt: skip
    opts = DiagnoseOptions(n_boot=0, progress=False)
    with server.serve(gguf, n_ctx=16384, start_timeout_s=120) as url:
        cfg = {"judges": [{"id": "llama", "kind": "openai", "model": server.MODEL_NAME, "base_url": url,
                           "api_key_env": KEY, "json_mode": False, "max_tokens": 300, "max_retries": 1,
                           "extra_body": {"response_format": {"type": "json_object", "schema": SCHEMA}}},
                          *rules], "arbiter": "rules-commands"}  # fmt: skip
        doc = diagnose(chosen, [], build_panel(cfg, "cfg"), tmp_path / "run", opts)
    status = doc["judges"]["status"]["llama"]
    assert status == {"valid": len(chosen)}, status  # grammar-constrained: every answer parses
    assert doc["judges"]["kinds"] == {
        "llama": "model",
        "rules-changes": "rule",
        "rules-commands": "rule",
    }
    assert doc["judges"]["usage"]["llama"]["input_tokens"] > 0
    lines = [json.loads(x) for x in (tmp_path / "run/records.jsonl").read_text().splitlines()]
    assert all(ln["judges"][0]["annotation"]["candidate_formed"] is False for ln in lines)
    # the server is gone: the same study from the recorded replies
    rec = {"judges": [{"id": "llama", "kind": "recorded", "path": str(tmp_path / "run/judge_answers.jsonl")},
                      *rules], "arbiter": "rules-commands"}  # fmt: skip
    doc2 = diagnose(chosen, [], build_panel(rec, "rec"), tmp_path / "again", opts)
    assert doc2["judges"]["status"]["llama"] == {"valid": len(chosen)}
    lines2 = [json.loads(x) for x in (tmp_path / "again/records.jsonl").read_text().splitlines()]
    assert [ln["decision"] for ln in lines2] == [ln["decision"] for ln in lines]
    cal = calibrate_files(BUNDLED_LABELS, [tmp_path / "run/records.jsonl"])
    assert cal["seats"]["llama"] == "model" and cal["seats"]["rules-changes"] == "rule"
