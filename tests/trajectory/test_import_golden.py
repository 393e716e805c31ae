"""Every importer's output on the test data (../shared/data/trajectories and
tests/data/synthetic) matches its golden digest (tests/trajectory/golden).

A failure names the format, the trajectory and the fields that changed; if the change is
intended, run ``python scripts/regen_golden.py`` and commit the reviewed diff."""

import orjson
import pytest
from golden_digest import GOLDEN, compute
from shared_data import needed, params, present

COMPUTED = compute() if present else {}


@pytest.mark.parametrize("fmt", params(lambda: sorted(COMPUTED)))
def test_importer_output_matches_golden(fmt):
    path = GOLDEN / f"{fmt}.jsonl"
    assert path.is_file(), f"no golden file for {fmt}: run python scripts/regen_golden.py"
    want = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    got = COMPUTED[fmt]
    key = lambda r: (r["source"], r["record"], r["id"])  # noqa: E731
    assert [key(r) for r in got] == [key(r) for r in want], "trajectories appeared or vanished"
    for g, w in zip(got, want, strict=True):
        changed = {k: (w[k], g[k]) for k in w if g.get(k) != w[k]}
        assert not changed, f"{fmt} {g['source']} {g['id']}: (golden, now) {changed}"


@needed
def test_no_golden_file_without_a_format():
    assert {p.stem for p in GOLDEN.glob("*.jsonl")} == set(COMPUTED)
