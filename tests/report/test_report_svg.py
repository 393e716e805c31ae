"""The hand-written SVG charts and the page shell: well-formed, self-contained, honest about NA."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html import unescape

from agentpost.report.html import CSP, Section, not_run, page, producer_line, table
from agentpost.report.svg import bar_chart, line_chart, nice_ticks
from agentpost.report.svg_estimates import count_matrix, interval_chart

NS = "{http://www.w3.org/2000/svg}"


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # raises on malformed XML
    assert root.tag == f"{NS}svg" and root.get("class") == "plot"
    return root


def test_nice_ticks_cover_the_range() -> None:
    for lo, hi in [(0, 216), (0, 1), (-1.3, 0.4), (3, 3.2), (0, 0), (0, 1e7)]:
        t = nice_ticks(lo, hi)
        assert t[0] <= lo and t[-1] >= hi and t == sorted(t) and 2 <= len(t) <= 12


def test_bar_chart_draws_one_rect_per_value_and_handles_negatives_and_none() -> None:
    svg = bar_chart(["a", "b", "c"], {"x": [1.0, -2.0, None], "y": [3.0, 0.5, 4.0]}, title="T")
    root = _parse(svg)
    bars = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert len(bars) == 5  # None draws nothing
    assert all(float(r.get("height")) > 0 for r in bars)
    # the negative bar hangs below the zero line, the positive ones stand on it
    zero = next(float(ln.get("y1")) for ln in root.iter(f"{NS}line") if ln.get("stroke") == "#333")
    neg = next(r for r in bars if "-2" in r.find(f"{NS}title").text)
    assert abs(float(neg.get("y")) - zero) < 1.0


def test_stacked_bars_stack() -> None:
    root = _parse(bar_chart(["a"], {"x": [1.0], "y": [3.0]}, title="T", stacked=True))
    bars = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    lower, upper = sorted(bars, key=lambda r: -float(r.get("y")))
    assert abs(float(upper.get("y")) + float(upper.get("height")) - float(lower.get("y"))) < 0.2


def test_interval_chart_says_na_instead_of_drawing_zero() -> None:
    root = _parse(interval_chart([("VTR", 0.5, 0.2, 0.8), ("EDR", None, None, None)], title="T"))
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert any("NA" in (t or "") for t in texts)
    assert len(list(root.iter(f"{NS}circle"))) == 1


def test_line_chart_and_matrix_are_well_formed() -> None:
    _parse(line_chart({"a": [(0, 1.0), (1, 3.0)], "b": [(0, 2.0)]}, title="T"))
    root = _parse(count_matrix(["r1", "r2"], ["c1", "c2"], [[1, 0], [5, 2]], title="M"))
    assert {"1", "0", "5", "2"} <= {t.text for t in root.iter(f"{NS}text")}


def test_page_is_self_contained_and_escapes() -> None:
    sec = Section(
        "x",
        "X <b>",
        table(["a"], [["<script>alert(1)</script>"]]),
        provenance=[producer_line("f.json", {"name": "n", "version": "1", "args": {"k": 2}})],
    )
    html = page("t", "s", [sec, not_run("y", "Y", "no file")], {"name": "r", "version": "0"})
    assert CSP in html and "<script" not in html.replace("&lt;script", "")
    assert "Not run: no file" in html and 'f.json: n 1, args {"k": 2}' in unescape(html)
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")


def test_fmt_num_writes_thousands_without_exponent() -> None:
    from agentpost.report.svg import fmt_num

    assert fmt_num(1750.4) == "1750" and fmt_num(0.00431) == "0.00431" and fmt_num(None) == "NA"
    assert fmt_num(34_500.0) == "34.5k" and fmt_num(2_500_000) == "2.5M"


def test_rotated_labels_get_only_the_room_they_need() -> None:
    short = _parse(bar_chart([f"C{i}" for i in range(12)], {"x": [1.0] * 12}, title="T"))
    long_ = _parse(bar_chart([f"category-{i:02d}-long" for i in range(12)], {"x": [1.0] * 12}, title="T"))  # fmt: skip
    assert float(short.get("height")) + 40 < float(long_.get("height"))


def test_cwes_sort_numerically_and_per_turn_means_use_the_turns_reached() -> None:
    from agentpost.report.security import _cwe_part

    pc = {c: {"n": 1, "func_pass": 1.0, "sec_pass": 0.0} for c in ("CWE-78", "CWE-22", "CWE-918")}
    svg = _cwe_part({}, {"a": pc}, {})
    assert svg.index(">CWE-22<") < svg.index(">CWE-78<") < svg.index(">CWE-918<")
    from agentpost.report.tokens import mean_per_turn
    from agentpost.trajectory.model import Producer, Trajectory, Turn, Usage

    def traj(i: str, tokens: list[int]) -> Trajectory:
        turns = [Turn(index=k, usage=Usage(input_tokens=v, output_tokens=1)) for k, v in enumerate(tokens)]  # fmt: skip
        return Trajectory(id=i, turns=turns, producer=Producer(name="t", version="0"))

    # turn 2 is reached by one trajectory only: its mean is that trajectory's value
    assert mean_per_turn([traj("a", [9, 19, 29]), traj("b", [1, 3])]) == [(0.0, 6.0), (1.0, 12.0), (2.0, 30.0)]  # fmt: skip


def test_clipped_category_labels_end_in_an_ellipsis() -> None:
    cats = [f"config-repair/wrong-then-repaired-{i}" for i in range(9)] + ["short"]
    svg = bar_chart(cats, {"a": [1.0] * 10}, title="t")  # > 8 categories: rotated labels
    # cut at the end they would all read "config-repair/wrong-t…": cut in the middle instead
    assert ">config-…hen-repaired-0<" in svg and ">config-…hen-repaired-8<" in svg
    assert ">short<" in svg and ">config-repair/wrong-t…<" not in svg
    svg = bar_chart(["a-very-long-category-name", "b"], {"a": [1.0, 2.0]}, title="t", width=200)
    assert ">a-very-long-category-name</text>" not in svg
    assert "…<title>a-very-long-category-name</title></text>" in svg  # whole on hover
