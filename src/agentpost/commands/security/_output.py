"""What every `agentpost security` command prints: JSON on one line, rates and verdicts for the
terminal (producer blocks come from ``documents.formats.producer``).

Layer: edges.
"""

from __future__ import annotations

import json

import typer


def num(x: float | None) -> str:
    """A rate for the terminal: 3 significant digits, NA for None."""
    return "NA" if x is None else f"{x:.3g}"


def verdicts(g: dict) -> str:
    """``func=pass sec=fail`` for one reference's grade."""
    return " ".join(
        f"{k}={'NA' if g.get(k) is None else 'pass' if g[k] else 'fail'}" for k in ("func", "sec")
    )


def echo(doc: dict) -> None:
    typer.echo(json.dumps(doc, ensure_ascii=False, default=str))
