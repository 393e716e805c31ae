"""SFT rows: per-message training flags become labels through a real chat template; truncation
never cuts a supervised token silently; Parquet, HF datasets and verl files keep the flags."""

from __future__ import annotations

import pytest

pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("transformers")

from chat_tokenizer import FORGETFUL, chat_tokenizer  # noqa: E402

from agentpost.errors import InputError  # noqa: E402
from agentpost.sft.io import (  # noqa: E402
    read_rows,
    to_hf_dataset,
    tokenized_dataset,
    write_rows,
    write_verl,
)
from agentpost.sft.rows import (  # noqa: E402
    IGNORE,
    RowDropped,
    SFTRow,
    TemplateError,
    make_row,
    template_messages,
    tokenize_row,
    tokenize_rows,
)


def conversation() -> list[dict]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
    }
    return [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": "student", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "assistant", "content": "teacher one", "reasoning_content": "why"},
        {"role": "tool", "content": "ok"},
        {"role": "assistant", "content": "teacher two"},
    ]


def supervised_text(tok, t) -> list[str]:
    """The label runs as strings (consecutive supervised tokens joined)."""
    runs, cur = [], []
    for tid, lab in zip(t.input_ids, t.labels, strict=True):
        if lab != IGNORE:
            assert lab == tid
            cur.append(tid)
        elif cur:
            runs.append(tok.decode(cur)), cur.clear()
    if cur:
        runs.append(tok.decode(cur))
    return runs


def test_only_trained_assistant_messages_carry_labels():
    tok = chat_tokenizer()
    row = make_row(conversation(), train_from=4, meta={"task_id": "t", "recipe": "scvd"})
    assert row.trained == [4, 6]
    t = tokenize_row(row, tok, max_length=4096, supervise_reasoning=True)
    # the role header is context; the message, its reasoning and its end-of-turn marker are targets
    assert supervised_text(tok, t) == [
        "<think>why</think>teacher one<|im_end|>\n",
        "teacher two<|im_end|>\n",
    ]
    # one tokenisation of the whole rendered conversation; JSON-string arguments reach the
    # template as dicts (templates tojson them), so they are not double-encoded
    full = tok.apply_chat_template(template_messages(row.messages), tokenize=False)
    assert tok.decode(t.input_ids) == full and 'bash {"cmd": "ls"}' in full
    assert t.completion_mask == [int(x != IGNORE) for x in t.labels]


def test_reasoning_stays_in_context_but_is_masked_when_not_supervised():
    tok = chat_tokenizer()
    t = tokenize_row(make_row(conversation(), 4), tok, max_length=4096, supervise_reasoning=False)
    assert supervised_text(tok, t) == [
        "<think>",
        "</think>teacher one<|im_end|>\n",
        "teacher two<|im_end|>\n",
    ]
    assert "why" in tok.decode(t.input_ids)


def test_changing_a_flag_changes_exactly_that_message():
    tok = chat_tokenizer()
    ftd = tokenize_row(make_row(conversation(), 0), tok, max_length=4096, supervise_reasoning=True)
    assert supervised_text(tok, ftd)[0].startswith("student<tool_call>bash {")
    assert len(supervised_text(tok, ftd)) == 3


def test_a_template_that_rewrites_history_is_refused():
    tok = chat_tokenizer(FORGETFUL)
    with pytest.raises(TemplateError, match="prefix-stable at message 4"):
        tokenize_row(make_row(conversation(), 4), tok, max_length=4096, supervise_reasoning=True)


def test_truncation_never_cuts_a_supervised_token_silently():
    tok = chat_tokenizer()
    row = make_row(conversation(), 6)
    full = tokenize_row(row, tok, max_length=4096)
    n, first = len(full.input_ids), full.labels.index(next(x for x in full.labels if x != IGNORE))
    with pytest.raises(RowDropped) as e:
        tokenize_row(row, tok, max_length=n - 1)
    assert e.value.reason == "too_long"
    left = tokenize_row(row, tok, max_length=n - first, truncation="left")
    assert left.truncated == first and left.labels[0] != IGNORE
    assert left.labels == full.labels[first:] and left.input_ids == full.input_ids[first:]
    with pytest.raises(RowDropped) as e:
        tokenize_row(row, tok, max_length=n - first - 1, truncation="left")
    assert e.value.reason == "supervised_exceeds_max_length"
    kept, dropped = tokenize_rows(
        [row, row, make_row(conversation(), 99)], tok, max_length=n - 1, truncation="drop"
    )
    assert kept == [] and dropped == {"too_long": 2, "no_trained_message": 1}


def test_only_assistant_messages_may_be_targets():
    with pytest.raises(ValueError, match=r"messages\[1\] is a user message marked train=true"):
        SFTRow(messages=[{"role": "system", "content": "", "train": False},
                         {"role": "user", "content": "x", "train": True}])  # fmt: skip
    with pytest.raises(ValueError, match="train must be true or false"):
        SFTRow(messages=[{"role": "user", "content": "x"}])


def test_parquet_hf_and_verl_files_keep_the_flags(tmp_path):
    rows = [make_row(conversation(), 4, {"task_id": "t1", "source": "scvd"}),
            make_row(conversation()[:3], 0, {"task_id": "t2", "source": "ftd"})]  # fmt: skip
    path = write_rows(rows, tmp_path / "d" / "rows.parquet")
    back = read_rows(path)
    assert [r.meta for r in back] == [r.meta for r in rows]
    assert [r.trained for r in back] == [[4, 6], [2]]
    tok = chat_tokenizer()
    for a, b in zip(rows, back, strict=True):  # the same tokens and labels after the round trip
        assert tokenize_row(a, tok, max_length=4096) == tokenize_row(b, tok, max_length=4096)
    ds = to_hf_dataset(back)
    assert ds.num_rows == 2 and [m["train"] for m in ds[0]["messages"]] == [
        False, False, False, False, True, False, True]  # fmt: skip
    tds = tokenized_dataset([tokenize_row(r, tok, max_length=4096) for r in back])
    assert tds.column_names == ["input_ids", "labels"]
    verl = pq.read_table(write_verl(back, tmp_path / "verl.parquet")).to_pylist()
    assert [m["loss_mask"] for m in verl[0]["messages"]] == [0, 0, 0, 0, 1, 0, 1]
    assert "train" not in verl[0]["messages"][0]


def test_a_bad_file_is_a_one_line_input_error(tmp_path):
    bad = tmp_path / "x.parquet"
    bad.write_text("not parquet")
    with pytest.raises(InputError, match="x.parquet: not a Parquet file"):
        read_rows(bad)
