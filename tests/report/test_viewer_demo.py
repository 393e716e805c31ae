"""The viewer of the demo's report (embedded data), driven in headless Chromium as a user
would: filter by agent and outcome, sort by tokens, keep a range of turns, open a trajectory
by a click and by a deep link to a turn, and reach every trajectory the demo holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_chromium import Browser, chromium_path
from test_viewer_scale import COUNT, OPEN, OPEN_ALL, ROWS, _click, _type

CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh)"
)


def _index(report: Path) -> dict:
    m = re.search(r'<script type="application/json" id="ap-index">(.*?)</script>',
                  report.read_text(), re.S)  # fmt: skip
    assert m, "the demo's viewer data is embedded in the page"
    return json.loads(m.group(1))


def _select(sel_id: str, value: str) -> str:
    return (f"(() => {{ const s = document.getElementById('{sel_id}'); s.value = {json.dumps(value)};"
            " s.dispatchEvent(new Event('change')); return s.value; })()")  # fmt: skip


def test_the_demo_viewer_filters_sorts_opens_and_reaches_every_trajectory(demo_run) -> None:
    report = demo_run[0]
    index = _index(report)
    cols, n = index["cols"], index["n"]
    assert not (report.parent / "report_data").exists()
    agent = "scripted/wasteful"
    k = index["agents"].index(agent)
    mine = [i for i in range(n) if cols["agent"][i] == k]
    with Browser(CHROMIUM) as b:
        b.open(report, ready=COUNT)
        assert b.eval(COUNT) == f"{n} of {n} trajectories"
        b.eval(_select("tv-agent", agent))
        assert b.eval(COUNT) == f"{len(mine)} of {n} trajectories"
        b.eval(_select("tv-outcome", "1"))
        solved = [i for i in mine if cols["resolved"][i] is True]
        assert b.eval(COUNT) == f"{len(solved)} of {n} trajectories"
        b.eval(_select("tv-outcome", ""))
        b.eval(_click("th.tv-sort[data-key=tokens]"))  # largest first
        listed = b.eval(ROWS)
        tokens = {cols["id"][i]: cols["tokens"][i] for i in mine}
        assert listed == sorted(tokens, key=lambda i: (-(tokens[i] or 0), list(tokens).index(i)))
        b.eval(_type("input.tv-range[data-key=turns][data-side=min]", "6"))
        many = [cols["id"][i] for i in mine if cols["turns"][i] >= 6]
        assert sorted(b.eval(ROWS)) == sorted(many)
        b.eval("(document.querySelector('#tv-list tbody tr').click(), 1)")
        b.wait(f"{OPEN} === 'open'")
        opened = b.eval("document.querySelector('#tv-detail h3').textContent")
        assert opened == b.eval(ROWS)[0]
        assert b.eval("decodeURIComponent(location.hash)") == f"#traj={opened}"
        # a deep link to a turn, then every trajectory of the demo, each by its link
        b.open(report, fragment=f"traj={cols['id'][-1]}&turn=1", ready=f"{OPEN} === 'open'")
        assert b.eval("document.querySelector('.tv-target').id") == "tv-turn-1"
        assert b.eval(OPEN_ALL % json.dumps(cols["id"])) == []
        assert b.errors() == []
