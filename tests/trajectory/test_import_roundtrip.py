"""Importers build models without validation (for speed); every one must still be a valid
canonical trajectory: validating its JSON gives back the same bytes, with and without raw."""

import warnings
from pathlib import Path

import orjson
import pytest
from shared_data import TRAJECTORIES

from agentpost.trajectory.importing import import_paths
from agentpost.trajectory.io import dumps
from agentpost.trajectory.model import Trajectory

DATA = TRAJECTORIES
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.mark.parametrize("keep_raw", [False, True])
def test_constructed_equals_validated(shared_data, keep_raw):
    report = import_paths([DATA, FIXTURES], keep_raw=keep_raw)
    assert not report.errors and len(report.trajectories) >= 28
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a mistyped field would warn during serialisation
        for t in report.trajectories:
            line = dumps(t)
            again = Trajectory.model_validate(orjson.loads(line))
            assert dumps(again) == line, t.id
            assert (t.raw is not None) == keep_raw
            assert t.producer.name == f"agentpost.import.{t.source.format}"
