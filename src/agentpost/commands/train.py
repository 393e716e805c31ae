"""`agentpost train sft`: fine-tune a model on agentpost SFT rows (SCVD, FTD, SecureVibe) with
TRL's SFTTrainer; defaults are the SCVD paper's Table 8.

Layer: edges.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from agentpost.commands._options import config
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json
from agentpost.errors import InputError

# SFTDefaults field -> its flag (a config error names both)
FLAGS = {"num_train_epochs": "--epochs", "learning_rate": "--lr", "max_length": "--max-length",
         "gradient_accumulation_steps": "--grad-accum", "truncation": "--truncation"}  # fmt: skip


def sft_cmd(
    data: Annotated[list[Path], typer.Argument(help="Parquet files of agentpost.sft/1 rows.")],
    model: Annotated[
        str,
        typer.Option(
            "--model", help="A local model directory (with its tokenizer), or 'tiny' (built here)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")],
    epochs: Annotated[
        float | None,
        typer.Option(help="Default: 3 (the SCVD paper's fine-tuning settings, its Table 8)."),
    ] = None,
    learning_rate: Annotated[
        float | None, typer.Option("--lr", help="Default: 1e-5 (the SCVD paper's).")
    ] = None,
    max_length: Annotated[
        int | None, typer.Option(help="Tokens per row at most. Default: 32768 (the SCVD paper's).")
    ] = None,
    max_steps: Annotated[int, typer.Option(help="Stop after N optimiser steps (-1: all).")] = -1,
    grad_accum: Annotated[
        int | None, typer.Option(help="Gradient accumulation steps. Default: 8 (the SCVD paper's).")
    ] = None,
    checkpointing: Annotated[
        bool, typer.Option("--checkpointing/--no-checkpointing", help="Activation checkpointing.")
    ] = True,
    supervise_reasoning: Annotated[
        bool,
        typer.Option(
            "--supervise-reasoning/--mask-reasoning",
            help="Train on the trained messages' reasoning text too, or mask it out of the loss.",
        ),
    ] = True,
    truncation: Annotated[str, typer.Option(help="drop | left (never cuts a target).")] = "drop",
    cpu: Annotated[bool, typer.Option("--cpu", help="Train on the CPU.")] = False,
    seed: Annotated[int, typer.Option(help="Training seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run document.")] = False,
) -> None:
    """Supervised fine-tuning on the rows' trained messages only (loss mask from the flags)."""
    from dataclasses import asdict

    from agentpost.sft.io import read_rows
    from agentpost.train.trl_sft import SFTDefaults, train_sft

    given = {"num_train_epochs": epochs, "learning_rate": learning_rate,
             "max_length": max_length, "gradient_accumulation_steps": grad_accum}  # fmt: skip
    d = config(SFTDefaults, FLAGS, supervise_reasoning=supervise_reasoning,
               truncation=truncation, gradient_checkpointing=checkpointing,
               **{k: v for k, v in given.items() if v is not None})  # fmt: skip
    rows = []
    for f in data:
        if not f.is_file():
            raise InputError(f, None, "no such file")
        rows += read_rows(f)
    if not rows:
        raise InputError(data[0], None, "no rows to train on")
    net, tok = _load(model, d.max_length)
    extra = {"max_steps": max_steps, "seed": seed, **({"use_cpu": True} if cpu else {})}
    try:
        run = train_sft(rows, net, tok, out, d, **extra)
    except ValueError as e:
        raise InputError(data[0], None, str(e)) from None
    doc = {
        "format": fmt("agentpost.train.sft"),
        "producer": producer(train_sft, data=[str(f) for f in data], model=model, **asdict(d),
                             **extra),
        **run.to_json(),
    }  # fmt: skip
    write_json(out / "train.json", doc)
    if as_json:
        sys.stdout.write(json.dumps(doc, default=str) + "\n")
        return
    losses = [e["loss"] for e in run.log]
    sys.stdout.write(
        f"trained on {run.rows} rows ({run.supervised_tokens} supervised tokens), "
        f"dropped {run.dropped or 'none'}; loss {losses[0]:.4f} → {losses[-1]:.4f} over "
        f"{len(losses)} steps\nwrote {out}/train.json and the model in {out}\n"
    )


def _load(model: str, max_length: int):
    if model == "tiny":
        from agentpost.train.tiny import char_chat_tokenizer, tiny_llama

        tok = char_chat_tokenizer()
        return tiny_llama(len(tok), max_positions=max(max_length, 512)), tok
    path = Path(model)
    if not (path / "config.json").is_file():
        raise InputError(model, "--model", "not a model directory (no config.json); or use tiny")
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(path)
    if tok.chat_template is None:
        raise InputError(model, "--model", "the tokenizer has no chat template")
    return transformers.AutoModelForCausalLM.from_pretrained(path), tok


def register(app: typer.Typer) -> None:
    train = typer.Typer(help="Training: SFT on agentpost rows (TRL).", no_args_is_help=True)
    train.command("sft")(sft_cmd)
    app.add_typer(train, name="train")
