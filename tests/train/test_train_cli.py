"""`agentpost train sft` end to end on a tiny model built in the command (no downloads)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")

from typer.testing import CliRunner  # noqa: E402

from agentpost import cli  # noqa: E402
from agentpost.sft.io import write_rows  # noqa: E402
from agentpost.sft.rows import make_row  # noqa: E402


def invoke(*args):
    cli._register()
    return CliRunner().invoke(cli.app, list(args))


def test_train_sft_on_a_tiny_model(tmp_path):
    msgs = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "student"},
            {"role": "tool", "content": "out"}, {"role": "assistant", "content": "teacher"}]  # fmt: skip
    data = write_rows([make_row(msgs, 3, {"task_id": "t"})] * 3, tmp_path / "rows.parquet")
    res = invoke("train", "sft", str(data), "--model", "tiny", "-o", str(tmp_path / "m"),
                 "--max-steps", "3", "--cpu", "--no-checkpointing", "--max-length", "512",
                 "--grad-accum", "1", "--lr", "1e-3")  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "m" / "train.json").read_text())
    assert doc["rows"] == 3 and len(doc["log"]) == 3 and doc["dropped"] == {}
    assert doc["producer"]["args"]["learning_rate"] == 1e-3
    # per row: the characters of "teacher", the <|im_end|> token and the newline after it
    assert doc["supervised_tokens"] == 3 * (len("teacher") + 2)
    assert (tmp_path / "m" / "model.safetensors").exists()


def test_rows_that_do_not_fit_are_counted_and_none_left_is_an_input_error(tmp_path):
    msgs = [{"role": "user", "content": "x" * 300}, {"role": "assistant", "content": "y"}]
    data = write_rows([make_row(msgs, 0)], tmp_path / "rows.parquet")
    res = invoke("train", "sft", str(data), "--model", "tiny", "-o", str(tmp_path / "m"),
                 "--max-length", "100", "--cpu")  # fmt: skip
    assert res.exit_code != 0
    assert "no trainable rows (dropped: {'too_long': 1})" in str(res.exception)
