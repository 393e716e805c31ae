"""The viewer's data (report.viewer, report.viewer_store): per-turn fields, whole texts, SCVD
markers, the index, embedded blocks no trajectory text can break out of, and external shards
written beside the page (never through a link, never over someone else's folder)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import orjson
import pytest

from agentpost.errors import InputError
from agentpost.report.viewer import MAX_TEXT, entry, index, meta
from agentpost.report.viewer_store import MARK, Shards
from agentpost.trajectory.model import (
    FORMAT,
    Observation,
    Outcome,
    Producer,
    ToolCall,
    Trajectory,
    Turn,
    Usage,
)  # fmt: skip


def _traj(text: str, tid: str = "t::m::0") -> Trajectory:
    turns = [
        Turn(index=0, text=text, tool_calls=[ToolCall(name="bash", command="ls")],
             observations=[Observation(text="a\nb", exit_code=2)],
             usage=Usage(input_tokens=100, cached_tokens=40, output_tokens=7)),
        Turn(index=1, text="done"),
    ]  # fmt: skip
    return Trajectory(format=FORMAT, id=tid, task_id="t", model="m", turns=turns,
                      outcome=Outcome(resolved=False), producer=Producer(name="x", version="0"))  # fmt: skip


def test_entry_carries_every_per_turn_field_and_the_scvd_marker() -> None:
    row = {"agent": "m", "tokens": 107, "turn_flags": ["RE", ""], "turn_entropy": [0.5, None],
           "unproductive_turns": 1, "mean_entropy": 0.5}  # fmt: skip
    rec = {"record": {"I_c": True, "I_v": False, "z": None, "y_c": None, "y_f": 0},
           "decision": {"candidate_step": 0}}  # fmt: skip
    e = entry(_traj("hello"), row, rec, [0.25, -1.0])
    t0 = e["turns"][0]
    assert (t0["in"], t0["cached"], t0["out"], t0["h"], t0["f"], t0["adv"]) == (
        100, 40, 7, 0.5, "RE", 0.25)  # fmt: skip
    assert t0["calls"] == [{"name": "bash", "cmd": "ls"}] and t0["obs"][0]["exit"] == 2
    assert e["scvd"]["tags"] == ["unverified"] and e["scvd"]["step"] == 0
    m = meta(_traj("hello"), row, rec)
    assert (m["flags"], m["tags"], m["tokens"], m["turns"], m["unprod"], m["h"]) == (
        "ERU", ["unverified"], 107, 2, 1, 0.5)  # fmt: skip


def test_texts_are_whole_up_to_the_cap_and_cut_visibly_beyond_it() -> None:
    long = "x" * 50_000  # the old viewer cut this at 285 to 2000 characters
    assert entry(_traj(long), {}, None, None)["turns"][0]["text"] == long
    huge = entry(_traj("y" * (MAX_TEXT + 7)), {}, None, None)["turns"][0]["text"]
    assert huge.startswith("y" * MAX_TEXT) and "[cut: 7 more characters]" in huge


def _index(shards: Shards, trajs: list[Trajectory]) -> dict:
    for t in trajs:
        shards.add(entry(t, {}, None, None))
    shards.finish()
    where = shards.name if shards.external else None
    return index([meta(t, {}, None) for t in trajs], ["m"] * len(trajs), shards.places,
                 shards.digests, where)  # fmt: skip


def test_the_embedded_blocks_cannot_be_closed_by_trajectory_text(tmp_path: Path) -> None:
    hostile = "</script><script>alert(1)</script><!--&"
    shards = Shards(tmp_path / "report.html")
    html = shards.html(_index(shards, [_traj(hostile)]))
    assert not shards.external and html.count("</script>") == 2  # the index and one shard
    blocks = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', html, re.S)
    assert [b[0] for b in blocks] == ["ap-index", "ap-shard-0"]
    assert all("<" not in b and ">" not in b and "&" not in b for _, b in blocks)
    assert json.loads(blocks[1][1])[0]["turns"][0]["text"] == hostile
    assert json.loads(blocks[0][1])["cols"]["id"] == ["t::m::0"]


def test_a_big_run_goes_to_shards_beside_the_page_with_a_digest_each(tmp_path: Path) -> None:
    trajs = [_traj("z" * 400, f"t::m::{i}") for i in range(40)]
    shards = Shards(tmp_path / "report.html", shard_bytes=2_000, embed_bytes=5_000)
    html = shards.html(_index(shards, trajs))
    assert shards.external and html == '<script src="report_data/index.js"></script>'
    assert not (tmp_path / "report_data").exists()  # written beside, put in place by install
    shards.install()
    files = sorted(os.listdir(tmp_path / "report_data"))
    assert files[0] == "index.js" and len(files) == 1 + len(shards.digests) > 3
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left
    shard3 = (tmp_path / "report_data" / "s-000003.js").read_bytes()
    assert shard3.startswith(MARK)
    n, digest, entries = re.fullmatch(rb"window.__apShard\((\d+),(\"\w+\"),(.*)\);\n",
                                      shard3[len(MARK):], re.S).groups()  # fmt: skip
    assert int(n) == 3 and orjson.loads(digest) == shards.digests[3]
    at = [i for i, (s, _) in enumerate(shards.places) if s == 3]
    assert [e["id"] for e in orjson.loads(entries)] == [trajs[i].id for i in at]
    idx = (tmp_path / "report_data" / "index.js").read_bytes()[len(MARK) :]
    doc = orjson.loads(idx.removeprefix(b"window.__apIndex=").removesuffix(b";\n"))
    assert doc["dir"] == "report_data" and doc["cols"]["shard"][at[0]] == 3 and doc["n"] == 40
    # a second, small build replaces the stale folder it finds (it is agentpost's own)
    again = Shards(tmp_path / "report.html")
    again.html(_index(again, trajs[:1]))
    again.install()
    assert not (tmp_path / "report_data").exists()


@pytest.mark.parametrize("planted", ["link", "file", "foreign dir"])
def test_a_data_folder_not_written_by_agentpost_is_never_replaced(
    tmp_path: Path, planted: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    target = tmp_path / "out" / "report_data"
    target.parent.mkdir()
    if planted == "link":
        target.symlink_to(elsewhere)
    elif planted == "file":
        target.write_text("a file")
    else:
        target.mkdir()
        (target / "index.js").write_text("// someone's own index.js")
    small = Shards(tmp_path / "out" / "report.html")  # embedded: the folder is left alone
    small.html(_index(small, [_traj("q")]))
    small.install()
    big = Shards(tmp_path / "out" / "report.html", shard_bytes=50, embed_bytes=10)
    big.html(_index(big, [_traj("q" * 200, f"t::m::{i}") for i in range(3)]))
    with pytest.raises(InputError, match="not a report data folder"):
        big.install()
    big.discard()
    assert (elsewhere / "keep.txt").read_text() == "mine"
    assert target.is_symlink() or target.exists()
    assert [p.name for p in target.parent.iterdir()] == ["report_data"]
