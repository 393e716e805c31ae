"""``real_labels.withheld`` meets a label file it cannot read: a clear error naming the file and
the line, never a JSON traceback (it runs before the label loader, whose errors already do)."""

from __future__ import annotations

import json

import pytest

from agentpost.errors import InputError
from agentpost.scvd import real_labels


def _files(tmp_path, lines: list[str]):
    (tmp_path / real_labels.CALIBRATION).write_text(json.dumps({"scored_once": {}}))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(lines) + "\n")
    return labels


def test_a_malformed_label_line_names_the_file_and_line(tmp_path):
    labels = _files(tmp_path, ['{"split": "heldout", "batch": "v9-heldout"}', '{"split": '])
    with pytest.raises(InputError) as err:
        real_labels.withheld(labels)
    assert err.value.path == str(labels) and err.value.where == "line 2"


def test_a_frozen_unscored_batch_is_withheld_and_the_one_scored_now_is_not(tmp_path):
    labels = _files(tmp_path, ['{"split": "heldout", "batch": "v9-heldout"}', "",
                               '{"split": "tune", "batch": "v1-tune"}'])  # fmt: skip
    assert real_labels.withheld(labels) == {"v9-heldout"}
    assert real_labels.withheld(labels, "v9-heldout") == set()
