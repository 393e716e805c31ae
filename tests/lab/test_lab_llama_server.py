"""A real model server: a policy built here, written as GGUF, served by llama.cpp's
OpenAI-compatible server; `agentpost run` records its real top-k log-probs, and a judge panel
with an LLM judge on that server runs through the same transport.

llama.cpp's logits are checked against the HF model's on the same ids first, so the served model
is the trained one (not just some model). Skips where llama-cpp-python is not installed
(``bash scripts/setup.sh --llama`` builds it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from agentpost.lab import server  # noqa: E402

pytestmark = pytest.mark.skipif(
    not server.available(), reason="llama-cpp-python is not installed (setup.sh --llama)"
)
TEXTS = ["ls -la", "grep -c 'timeout' app.log > count.txt", "Count the lines of /app/app.log"] * 20
KEY = "AGENTPOST_TEST_LLAMA_KEY"


@pytest.fixture(scope="module")
def gguf_model(tmp_path_factory):
    from agentpost.lab.gguf import write_gguf
    from agentpost.lab.policy import PolicySize, lab_llama, train_tokenizer

    d = tmp_path_factory.mktemp("llama")
    tok = train_tokenizer(TEXTS, 300, llama_compatible=True)
    size = PolicySize(hidden=64, layers=2, heads=4, intermediate=128, max_positions=8192)
    model = lab_llama(tok, seed=0, size=size)
    return model, tok, write_gguf(model, tok, d / "policy.gguf")


def test_llama_cpp_computes_the_same_logits_as_the_hf_model(gguf_model):
    import numpy as np
    import torch
    from llama_cpp import Llama

    model, tok, path = gguf_model
    text = "<|task|>Count the lines of /app/app.log<|cmd|>grep"
    ids = tok.encode(text, add_special_tokens=False)
    llm = Llama(model_path=str(path), logits_all=True, verbose=False, n_ctx=256)
    assert llm.tokenize(text.encode(), add_bos=False, special=True) == ids
    llm.eval(ids)
    ours = np.array(llm.scores[: len(ids)])
    with torch.no_grad():
        ref = model(torch.tensor([ids])).logits[0].numpy()
    assert np.allclose(ours, ref, atol=1e-3), float(np.abs(ours - ref).max())


def test_run_and_an_llm_judge_against_the_real_server(gguf_model, tmp_path, monkeypatch):
    from agentpost.judges.config import build_panel
    from agentpost.lab.tasks import write_family
    from agentpost.scvd.pipeline import DiagnoseOptions, diagnose
    from agentpost.trajectory.io import read_jsonl

    _, _, path = gguf_model
    write_family(tmp_path / "tasks", seed=0, n_train=1, n_heldout=0)
    monkeypatch.setenv(KEY, "EMPTY")
    with server.serve(path, n_ctx=8192) as url:  # the judge prompt is ~5k tokens
        out = tmp_path / "run"
        cmd = [str(Path(sys.executable).parent / "agentpost"), "run", "--model", server.MODEL_NAME,
               "--base-url", url, "--api-key-env", KEY, "--suite", str(tmp_path / "tasks" / "train"),
               "--mode", "text", "--step-limit", "2", "--max-tokens", "12", "--temperature", "1",
               "-o", str(out), "--json"]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ})
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        (traj,) = read_jsonl(out / "trajectories.jsonl")
        assert traj.model == server.MODEL_NAME and len(traj.turns) == 2
        for turn in traj.turns:  # real sampled tokens, each with its top-k alternatives
            lp = turn.logprobs
            assert lp is not None and lp.chosen and all(x is None or x <= 0 for x in lp.chosen)
            assert lp.top_logprobs and all(len(row) >= 1 for row in lp.top_logprobs)
            assert turn.usage.source == "reported" and turn.usage.output_tokens > 0
        cfg = {"judges": [
            {"id": "lab", "kind": "openai", "model": server.MODEL_NAME, "base_url": url,
             "api_key_env": KEY, "json_mode": False, "max_tokens": 16, "max_retries": 1},
            {"id": "h1", "kind": "heuristic"}, {"id": "h2", "kind": "heuristic"}]}  # fmt: skip
        doc = diagnose([traj], [], build_panel(cfg, "judges"), tmp_path / "diag",
                       DiagnoseOptions(n_boot=0, progress=False))  # fmt: skip
    status = doc["judges"]["status"]["lab"]
    # the tiny model cannot write the annotation JSON: it is re-asked, then abstains; never an
    # endpoint error, and its real token usage is counted
    assert status.get("infra_error", 0) == 0 and sum(status.values()) == 1, status
    assert doc["judges"]["usage"]["lab"]["input_tokens"] > 0, json.dumps(doc["judges"]["usage"])
