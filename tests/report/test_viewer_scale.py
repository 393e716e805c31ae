"""The viewer of a 10,000-trajectory run, driven in headless Chromium: the page lists, sorts and
filters every trajectory from its index, opens any one (its shard read on demand from the data
folder beside the page), follows a deep link, and says so plainly when the data folder is
missing or belongs to another build. Functional only: the time to open is measured in
bench/analysis.py, never asserted here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from report_chromium import Browser, chromium_path
from synthetic_run import small_templates, write_run

from agentpost.hero.cost import trajectory_tokens
from agentpost.report.build import render_run_dir
from agentpost.trajectory.io import iter_jsonl

CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh)"
)
N = 10_000
COUNT = "document.getElementById('tv-count').textContent"
ROWS = "[...document.querySelectorAll('#tv-list tbody tr')].map(r => r.dataset.id)"
OPEN = "document.getElementById('tv-detail').dataset.state"


def _click(selector: str) -> str:
    return f"(document.querySelector({json.dumps(selector)}).click(), 1)"


def _type(selector: str, value: str) -> str:
    return (f"(() => {{ const b = document.querySelector({json.dumps(selector)}); "
            f"b.value = {json.dumps(value)}; b.dispatchEvent(new Event('input')); return 1; }})()")  # fmt: skip


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    run = tmp_path_factory.mktemp("rl-run")
    write_run(run / "trajectories.jsonl", N, small_templates())
    facts = {
        t.id: (trajectory_tokens(t), len(t.turns), t)
        for t in iter_jsonl(run / "trajectories.jsonl")
    }
    return render_run_dir(run), facts


def test_ten_thousand_trajectories_list_sort_filter_and_open(big: tuple[Path, dict]) -> None:
    report, facts = big
    data = report.parent / "report_data"
    assert len(list(data.glob("s-*.js"))) > 3  # sharded beside the page, not embedded
    assert report.stat().st_size < 2_000_000  # the page itself stays small
    with Browser(CHROMIUM) as b:
        b.open(report, ready=COUNT)
        assert b.eval(COUNT) == f"{N} of {N} trajectories"
        assert (
            len(b.eval(ROWS)) == 100
            and b.eval("document.getElementById('tv-page').textContent") == "rows 1–100 of 10000"
        )
        # sort: the first click on a numeric column puts the largest first
        b.eval(_click("th.tv-sort[data-key=tokens]"))
        top = max(v[0] or 0 for v in facts.values())
        first = b.wait(f"{ROWS}[0]")
        assert facts[first][0] == top
        b.eval(_click("th.tv-sort[data-key=tokens]"))  # again: smallest first
        assert facts[b.wait(f"{ROWS}[0]")][0] == min(
            v[0] for v in facts.values() if v[0] is not None
        )
        # numeric ranges: tokens >= 4000 and at most 3 turns
        b.eval(_type("input.tv-range[data-key=tokens][data-side=min]", "4000"))
        b.eval(_type("input.tv-range[data-key=turns][data-side=max]", "3"))
        want = sorted(
            i
            for i, (tok, turns, _) in facts.items()
            if tok is not None and tok >= 4000 and turns <= 3
        )
        assert b.eval(COUNT) == f"{len(want)} of {N} trajectories" and 0 < len(want) < N
        shown = b.eval(ROWS)
        assert set(shown) <= set(want) and len(shown) == min(100, len(want))
        # open a row of the second page of the filtered list
        b.eval(_click("#tv-next"))
        second = b.eval(ROWS)
        assert second and not set(second) & set(shown)
        b.eval(
            f"(document.querySelector('#tv-list tbody tr[data-id=\"{second[-1]}\"]').click(), 1)"
        )
        b.wait(f"{OPEN} === 'open'")
        assert b.eval("document.querySelector('#tv-detail h3').textContent") == second[-1]
        assert b.errors() == []
        assert all(u.startswith("file://") for u in b.requests())


def test_a_deep_link_opens_any_trajectory_at_its_turn(big: tuple[Path, dict]) -> None:
    report, facts = big
    last = list(facts)[-1]  # in the last shard
    t = facts[last][2]
    with Browser(CHROMIUM) as b:
        b.open(report, fragment=f"traj={last}&turn=1", ready=f"{OPEN} === 'open'")
        got = b.eval("[document.querySelector('#tv-detail h3').textContent,"
                     " document.querySelector('.tv-target').id,"
                     " [...document.querySelectorAll('#tv-detail .tv-text')].map(p => p.textContent)]")  # fmt: skip
        assert got[0] == last and got[1] == "tv-turn-1"
        assert got[2] == [t.instruction] + [u.text for u in t.turns]  # whole texts
        # a link to a trajectory the report does not hold says so
        b.eval("(location.hash = 'traj=nope', 1)")
        assert "No trajectory nope" in b.wait(
            "document.querySelector('#tv-detail p.note') && document.querySelector('#tv-detail p.note').textContent"
        )
        assert b.errors() == []


def test_a_missing_or_foreign_data_folder_is_said_in_the_page(
    big: tuple[Path, dict], tmp_path: Path
) -> None:
    report, facts = big
    copy = tmp_path / "copy"
    shutil.copytree(report.parent / "report_data", copy / "report_data")
    shutil.copy(report, copy / "report.html")
    last = list(facts)[-1]
    shard = orjson.loads(
        (copy / "report_data" / "index.js").read_bytes().split(b"=", 1)[1].rstrip(b";\n")
    )["cols"]["shard"][-1]
    path = copy / "report_data" / f"s-{shard:06d}.js"
    path.write_bytes(path.read_bytes().replace(b'",[', b'x",[', 1))  # another build's digest
    with Browser(CHROMIUM) as b:
        b.open(copy / "report.html", fragment=f"traj={last}", ready=f"{OPEN} === 'error'")
        assert "another build" in b.eval("document.querySelector('#tv-detail').textContent")
        shutil.rmtree(copy / "report_data")
        b.open(copy / "report.html", ready="!!document.querySelector('#tv-detail p')")
        assert "must stay beside the page" in b.eval(
            "document.querySelector('#tv-detail').textContent"
        )


# every id given is opened in turn by its deep link, in the page; returns the ids whose
# detail did not show them (an empty list: the viewer reaches each)
OPEN_ALL = """(async (ids) => {
  const missed = [];
  for (const id of ids) {
    location.hash = 'traj=' + encodeURIComponent(id);
    const d = document.getElementById('tv-detail');
    for (let k = 0; k < 400; k++) {
      const h = d.querySelector('h3');
      if (d.dataset.state !== 'loading' && h && h.textContent === id) break;
      await new Promise(r => setTimeout(r, 10));
    }
    const h = d.querySelector('h3');
    if (!h || h.textContent !== id || d.dataset.state !== 'open') missed.push(id);
  }
  return missed;
})(%s)"""


def test_the_viewer_reaches_a_trajectory_of_every_shard(big: tuple[Path, dict]) -> None:
    report, facts = big
    ids = list(facts)
    index = orjson.loads((report.parent / "report_data" / "index.js").read_bytes()
                         .split(b"=", 1)[1].rstrip(b";\n"))  # fmt: skip
    shard = index["cols"]["shard"]
    firsts = {s: ids[i] for i, s in reversed(list(enumerate(shard)))}  # first of each shard
    lasts = {s: ids[i] for i, s in enumerate(shard)}
    sample = sorted(set(firsts.values()) | set(lasts.values()))
    assert len(sample) >= 2 * (max(shard) + 1) - 1
    with Browser(CHROMIUM) as b:
        b.open(report, ready=COUNT)
        assert b.eval(OPEN_ALL % json.dumps(sample)) == []
        assert b.errors() == []
