"""SFT rows on disk and as datasets: Parquet (pyarrow), HF ``datasets``, verl's multi-turn file.

- ``write_rows(rows, path)`` / ``read_rows(path)``: the canonical Parquet file (one row per
  conversation: ``format``, ``messages`` with per-message ``train``, ``meta`` as JSON text),
  written to a temp file and renamed, so a crash leaves the old file or the new one.
- ``to_hf_dataset(rows)``: the same records as a ``datasets.Dataset`` (conversational, for
  inspection or TRL's own tokenisation).
- ``tokenized_dataset(items)``: pre-tokenised ``input_ids`` + ``labels`` for TRL's SFTTrainer,
  which uses a ``labels`` column as it is.
- ``write_verl(rows, path)``: Parquet for verl's ``MultiTurnSFTDataset`` (``messages`` with a
  per-message ``loss_mask``; set ``data.multiturn.enable=true data.multiturn.messages_key=messages``).

pyarrow and datasets are imported inside the functions.

Layer: io.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentpost.documents.write import atomic_write
from agentpost.errors import InputError
from agentpost.sft.rows import FORMAT, SFTRow, Tokenized, from_record, to_record, to_verl


def _write_table(records: list[dict[str, Any]], path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(records), sink)
    return atomic_write(path, sink.getvalue().to_pybytes())


def write_rows(rows: Iterable[SFTRow], path: str | Path) -> Path:
    """Write rows to Parquet (atomic replace)."""
    return _write_table([to_record(r) for r in rows], Path(path))


def read_rows(path: str | Path) -> list[SFTRow]:
    """Rows from a file ``write_rows`` wrote; a bad file is a one-line ``InputError``."""
    import pyarrow.parquet as pq

    p = Path(path)
    try:
        records = pq.read_table(p).to_pylist()
    except Exception as e:  # pyarrow raises several types for a non-Parquet file
        raise InputError(p, None, f"not a Parquet file: {e}") from None
    rows = []
    for i, rec in enumerate(records):
        if rec.get("format") != FORMAT:
            raise InputError(p, f"row {i}", f"format must be {FORMAT!r}, got {rec.get('format')!r}")
        try:
            rows.append(from_record(rec))
        except ValueError as e:
            raise InputError(p, f"row {i}", str(e).splitlines()[-1]) from None
    return rows


def to_hf_dataset(rows: Iterable[SFTRow]) -> Any:
    """A ``datasets.Dataset`` of the Parquet records (messages with ``train`` flags, meta)."""
    import datasets

    return datasets.Dataset.from_list([to_record(r) for r in rows])


def tokenized_dataset(items: Iterable[Tokenized]) -> Any:
    """A ``datasets.Dataset`` with ``input_ids`` and ``labels`` (-100 where masked)."""
    import datasets

    return datasets.Dataset.from_list([t.as_dict() for t in items])


def write_verl(rows: Iterable[SFTRow], path: str | Path) -> Path:
    """verl multi-turn SFT Parquet (``messages`` with per-message ``loss_mask``)."""
    return _write_table([to_verl(r) for r in rows], Path(path))
