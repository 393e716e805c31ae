"""Model judges in the SCVD panel, end to end (issue 29): a seat that asks an OpenAI-compatible
endpoint (a loopback HTTP server here, speaking the chat-completions protocol over a real socket)
next to two rule seats; the run keeps every raw answer, and a second study re-scores from those
recorded replies without calling the model again; ``scvd calibrate`` on the run's records says
which seats were models, which recorded and which rules. The real llama.cpp server is in
``test_scvd_llama_judge.py``."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentpost.judges.config import build_panel
from agentpost.scvd.calibrate_io import BUNDLED_LABELS, calibrate_files, read_labels
from agentpost.scvd.pipeline import DiagnoseOptions, diagnose

KEY = "AGENTPOST_TEST_JUDGE_KEY"
CASES = [
    "c-fix-build::scripted/careful::0",
    "extract-emails::scripted/hasty::0",
    "edge::explore-only",
]


class Endpoint:
    """A chat-completions server on 127.0.0.1 that answers like a (lazy) judge: the candidate is
    the first call of the rendered trajectory, with no verification. It counts requests."""

    def __init__(self) -> None:
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests += 1
                user = body["messages"][-1]["content"]
                for m in body["messages"]:
                    if m["role"] == "user" and "case_id:" in m["content"]:
                        user = m["content"]
                case = re.search(r"case_id: (.*)", user).group(1).strip()
                step = re.search(r"\[step (\d+), tool call 0\]", user)
                ann = {"case_id": case, "task_name": "", "candidate_formed": bool(step),
                       "candidate_step": int(step.group(1)) if step else None,
                       "candidate_tool_call_index": 0 if step else None,
                       "boundary_type": "clean" if step else None,
                       "verification_triggered": False, "verification_outcome": None}  # fmt: skip
                reply = {"id": "x", "object": "chat.completion", "model": body["model"],
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": json.dumps(ann)}}],
                         "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}  # fmt: skip
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _rules() -> list[dict]:
    return [{"id": "rules-changes", "kind": "heuristic", "variant": "changes"},
            {"id": "rules-commands", "kind": "heuristic", "variant": "commands"}]  # fmt: skip


def _opts() -> DiagnoseOptions:
    return DiagnoseOptions(n_boot=0, progress=False)


def test_model_seat_then_recorded_replies_then_calibration(tmp_path, monkeypatch) -> None:
    labels, _, trajs = read_labels(BUNDLED_LABELS)
    chosen = [trajs[c] for c in CASES if c in trajs]
    assert len(chosen) == 3
    monkeypatch.setenv(KEY, "EMPTY")
    with Endpoint() as ep:
        cfg = {"judges": [{"id": "model", "kind": "openai", "model": "judge-m", "base_url": ep.url,
                           "api_key_env": KEY, "max_retries": 1}, *_rules()],
               "arbiter": "rules-commands"}  # fmt: skip
        doc = diagnose(chosen, [], build_panel(cfg, "cfg"), tmp_path / "run", _opts())
        asked = ep.requests
    assert asked == len(chosen)  # one valid answer each, no re-asks
    assert doc["judges"]["kinds"] == {
        "model": "model",
        "rules-changes": "rule",
        "rules-commands": "rule",
    }
    assert doc["judges"]["status"]["model"] == {"valid": len(chosen)}
    assert doc["judges"]["usage"]["model"]["input_tokens"] == 100 * len(chosen)
    lines = [json.loads(x) for x in (tmp_path / "run/records.jsonl").read_text().splitlines()]
    assert all(ln["judge_kinds"]["model"] == "model" for ln in lines)
    assert all(
        ln["boundary_evidence"]["evidence"] in ("command", "edit-tool", "state-diff", "none")
        for ln in lines
    )
    answers = (tmp_path / "run/judge_answers.jsonl").read_text().splitlines()
    assert sum(json.loads(a)["judge"] == "model" for a in answers) == len(chosen)

    # the same study again, the model seat answered from the recorded replies: no server at all
    rec = {"judges": [{"id": "model", "kind": "recorded", "path": str(tmp_path / "run/judge_answers.jsonl"),
                       "judge": "model"}, *_rules()], "arbiter": "rules-commands"}  # fmt: skip
    doc2 = diagnose(chosen, [], build_panel(rec, "rec"), tmp_path / "again", _opts())
    lines2 = [json.loads(x) for x in (tmp_path / "again/records.jsonl").read_text().splitlines()]
    assert [ln["decision"] for ln in lines2] == [ln["decision"] for ln in lines]
    assert [ln["judges"][0]["annotation"] for ln in lines2] == [
        ln["judges"][0]["annotation"] for ln in lines
    ]
    assert doc2["judges"]["kinds"]["model"] == "recorded"

    # calibration on the run's records: each seat alone, its kind, the panel's decisions
    cal = calibrate_files(BUNDLED_LABELS, [tmp_path / "run/records.jsonl"])
    assert cal["seats"] == {"model": "model", "rules-changes": "rule", "rules-commands": "rule"}
    assert set(cal["judges"]) == {"model", "rules-changes", "rules-commands"}
    cal2 = calibrate_files(BUNDLED_LABELS, [tmp_path / "again/records.jsonl"])
    assert cal2["seats"]["model"] == "recorded"
    assert cal2["judges"]["model"]["pooled_accuracy"] == cal["judges"]["model"]["pooled_accuracy"]


def test_a_recorded_reply_missing_for_a_request_is_an_abstention_not_a_call(tmp_path) -> None:
    _, _, trajs = read_labels(BUNDLED_LABELS)
    (tmp_path / "empty.jsonl").write_text("")
    rec = {"judges": [{"id": "model", "kind": "recorded", "path": str(tmp_path / "empty.jsonl")},
                      *_rules()], "arbiter": "rules-commands"}  # fmt: skip
    doc = diagnose([trajs[CASES[0]]], [], build_panel(rec, "rec"), tmp_path / "r", _opts())
    assert doc["judges"]["status"]["model"] == {"abstained": 1}
    assert doc["panel"]["vote_rate"] == pytest.approx(1.0)  # the two rule seats still decide
