"""Chart defects of issue 16: one colour per agent in every chart, visible zero bars, top-N with
"others", bars that link to the trajectory viewer; and the explanations shown beside numbers."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from agentpost.report.explain import trs_caveat
from agentpost.report.palette import distinct_colors, label, short
from agentpost.report.svg import agent_colors, bar_chart, line_chart, top_n


def _fills(svg: str) -> list[str]:
    """Fill colours of the bars (rects with a tooltip), in drawing order."""
    return re.findall(r'fill="(#\w+)"[^>]*><title>', svg)


def test_an_agent_keeps_its_colour_across_charts() -> None:
    with agent_colors(["team/alpha", "team/beta", "gamma"]) as table:
        one = bar_chart(["team/alpha", "team/beta"], {"rate": [0.5, 0.7]}, title="a")
        two = bar_chart(["t1"], {"beta": [3.0], "alpha": [1.0]}, title="b")  # short names
        three = line_chart({"team/beta (4)": [(0, 1), (1, 2)]}, title="c")
    assert _fills(one)[:2] == [table["team/alpha"], table["team/beta"]]
    assert _fills(two)[:2] == [table["team/beta"], table["team/alpha"]]
    assert f'stroke="{table["team/beta"]}"' in three
    with agent_colors(["team/alpha"]) as t2:
        kinds = bar_chart(["x"], {"repeated call": [1.0], "tool error": [2.0]}, title="d")
    assert t2["team/alpha"] not in _fills(kinds)[:2]  # a behaviour never wears an agent's colour


def test_zero_bars_are_visible_and_none_draws_nothing() -> None:
    svg = bar_chart(["a", "b", "c"], {"n": [0.0, 2.0, None]}, title="zeros")
    ET.fromstring(svg)
    zero = re.search(r'<rect[^>]*height="2"[^>]*stroke="#333"[^>]*><title>a · n: 0</title>', svg)
    assert zero is not None and ">0</text>" in svg
    assert "c · n:" not in svg


def test_top_n_keeps_the_largest_and_averages_the_rest() -> None:
    cats = [f"t{i}" for i in range(6)]
    series = {"x": [1.0, 9.0, 2.0, 8.0, 3.0, None], "y": [0.0, 1.0, 0.0, 1.0, 1.0, 0.0]}
    links = [f"#traj={c}" for c in cats]
    c2, s2, l2 = top_n(cats, series, 2, links)
    assert c2 == ["t1", "t3", "others (4, mean)"]
    assert s2["x"] == [9.0, 8.0, 2.0] and s2["y"] == [1.0, 1.0, 0.25]
    assert l2 == ["#traj=t1", "#traj=t3", None]
    assert top_n(cats, series, 5)[0] == cats  # 6 categories fit in 5 + "others": unchanged


def test_bars_link_to_the_viewer() -> None:
    svg = bar_chart(["a&b"], {"n": [1.0]}, title="links", links=["#traj=a&b"])
    assert '<a href="#traj=a&amp;b"><rect' in svg
    ET.fromstring(svg)


def test_trs_caveat_uses_this_datas_numbers() -> None:
    models = [{"mean_tokens_m": 0.004}, {"mean_tokens_m": 0.04}]
    text = trs_caveat(models)
    assert "10x the tokens" in text and "under 1.9 points" in text
    assert trs_caveat([{"mean_tokens_m": 2.0}]) is None


def test_thirteen_models_wear_thirteen_colours_and_read_as_thirteen_labels() -> None:
    """Real runs: 13 models, two of them with one last part (openai/gpt-4o, azure/gpt-4o), and
    dated versions that agree on their first 22 characters."""
    names = [f"prov{i}/model-{i}" for i in range(9)] + [
        "openai/gpt-4o", "azure/gpt-4o",
        "anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5-20250514",
    ]  # fmt: skip
    with agent_colors(names) as table:
        labels = [short(n) for n in names]
        svg = bar_chart(labels, {"tokens": [float(i + 1) for i in range(13)]}, title="t")
        legend = bar_chart(["x"], {n: [1.0] for n in labels}, title="l", width=900)
    assert len({table[n] for n in names}) == 13  # no two models one colour
    assert len(set(labels)) == 13 and "gpt-4o" not in labels and "model-3" in labels
    shown = re.findall(r'rotate\(-40\)" text-anchor="end">([^<]*)', svg)
    assert len(shown) == 13 and len(set(shown)) == 13  # cut labels never read alike
    assert (
        "…" in "".join(shown) and "<title>anthropic/claude-sonnet-4-5-20250929</title>" not in svg
    )
    assert "<title>claude-sonnet-4-5-20250929</title>" in svg  # the whole label on hover
    assert len(set(_fills(svg))) == 13  # each bar wears its model's colour
    assert len(set(re.findall(r'<text x="[\d.]+" y="\d+">([^<]*)', legend))) == 13
    assert len(distinct_colors(60)) == len(set(distinct_colors(60))) == 60


def test_unknown_models_and_tasks_read_na_in_every_chart_never_none() -> None:
    from agentpost.report.efficiency import render

    rows = [{"id": f"t{i}", "task_id": None if i % 2 else f"task{i}", "model": None,
             "resolved": None, "tokens": 100 + i, "unproductive_turns": 1, "repeated_call_turns": 1,
             "over_exploration_turns": 0, "tool_error_turns": 0, "check_run_turns": 0}
            for i in range(4)]  # fmt: skip
    doc = {"models": [{"model": None, "trajectories": 4, "behaviour_counts": {}}],
           "trajectories": rows, "groups": []}  # fmt: skip
    with agent_colors(["NA"]):
        html = render([("eff.json", doc)], None).body
        assert label(None, None) == "NA/NA" and label("t", "org/m") == "t/m"
    assert "None" not in html and ">NA/NA<" in html and ">task0/NA<" in html
