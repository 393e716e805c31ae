"""`agentpost demo` end to end (on the first tasks of each bundled suite, to stay fast) and its
report opened in headless Chromium: no network, no console errors, every plot drawn.

The fixtures produce every number with the real library: scripted reference policies in real
bubblewrap sandboxes, the real evaluators, analyses, judges and replay; the logprob fixture runs
the agent loop against the real loopback chat-completions server, which returns top-10 logprobs.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from report_chromium import chromium_path, load_report

from agentpost.report.build import render_run_dir

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
LIMIT = 2  # the demo_run fixture's limit (tests/report/conftest.py)
CHROMIUM = chromium_path()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (bash scripts/setup.sh installs it)"
)


@pytest.fixture(scope="module")
def demo_dir(demo_run) -> tuple[Path, list[str], float]:
    return demo_run  # tests/report/conftest.py: one demo run per session


@pytest.fixture(scope="module")
def logprob_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tasks x two rollouts of a model on the loopback server (which sends top-10 logprobs),
    then the efficiency analysis over them."""
    from agentpost.agent.loop import LoopConfig
    from agentpost.agent.loopback import LoopbackServer
    from agentpost.agent.run import Agent, run_groups, write_summary
    from agentpost.agent.transport import OpenAITransport, TransportConfig
    from agentpost.hero.analyze import analyze
    from agentpost.sandbox.registry import get_backend
    from agentpost.tasks.loader import bundled_suite_path, load_suite
    from agentpost.trajectory.io import read_jsonl

    script = ["ls", "ls", "cat missing.txt", "ls -la"]

    def reply(body: dict) -> dict:
        k = sum(m["role"] == "assistant" for m in body["messages"])
        if k < len(script):
            return {
                "content": f"Step {k}.",
                "tool_calls": [{"name": "bash", "arguments": {"command": script[k]}}],
            }
        return {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {}}]}

    out = tmp_path_factory.mktemp("logprobs")
    tasks = load_suite(bundled_suite_path("terminal"))[:2]
    with LoopbackServer(reply) as srv:

        def make(task):  # noqa: ARG001 - one transport per rollout
            return OpenAITransport(
                TransportConfig(model="loopback-coder", base_url=srv.url, timeout_s=10)
            )

        res = run_groups(
            tasks,
            [Agent("loopback-coder", make)],
            attempts=2,
            out_dir=out / "run",
            backend=get_backend("bwrap"),
            loop=LoopConfig(),
        )
    write_summary(out / "run", {"model": "loopback-coder"}, res, {})
    doc = analyze(read_jsonl(out / "run" / "trajectories.jsonl"), n_boot=200)
    (out / "efficiency.json").write_text(json.dumps(doc))
    return out


def test_demo_writes_every_stage_and_ends_with_the_report(demo_dir) -> None:
    path, lines, seconds = demo_dir
    out = path.parent
    assert path == out / "report.html" and path.is_file()
    meta = json.loads((out / "demo.json").read_text())
    assert (
        meta["producer"]["name"] == "agentpost.demo.pipeline.run_demo"
        and meta["producer"]["args"]["limit"] == LIMIT
    )
    assert {k: v["status"] for k, v in meta["stages"].items()} == dict.fromkeys(
        ("run", "import", "efficiency", "hero", "diagnose", "loopback", "security"), "ok"
    ), meta["stages"]
    for rel in (
        "run/run.json",
        "run/trajectories.jsonl",
        "trajectories.jsonl",
        "import.json",
        "efficiency.json",
        "hero_advantages.json",
        "diagnose/metrics.json",
        "diagnose/records.jsonl",
        "security/summary.json",
        "security/attribution.json",
        "security/labels.jsonl",
        "loopback/trajectories.jsonl",
        "loopback/efficiency.json",
    ):
        assert (out / rel).is_file(), rel
    imported = json.loads((out / "import.json").read_text())
    n_run = len((out / "run/trajectories.jsonl").read_text().splitlines())
    assert (imported["detected_format"], imported["trajectories"]) == ("agentpost", n_run)
    eff_inputs = json.loads((out / "efficiency.json").read_text())["producer"]["args"]["inputs"]
    assert eff_inputs == ["trajectories.jsonl"]  # later stages read the imported file
    loop = json.loads((out / "loopback/efficiency.json").read_text())
    assert "not a real model" in loop["note"]
    (model,) = loop["models"]  # the loopback fake model's turns carry logprobs, so entropy
    assert model["model"] == "scripted/loopback-fake-model" and model["association"]["turns"] > 0
    assert all(h is not None for r in loop["trajectories"] for h in r["turn_entropy"])
    run = json.loads((out / "run/run.json").read_text())
    assert (
        run["agents"]["scripted/hasty"]["resolved"] < run["agents"]["scripted/careful"]["resolved"]
    )
    scvd = json.loads((out / "diagnose/metrics.json").read_text())["metrics"]["per_model"]
    assert scvd["scripted/hasty"]["VTR"] == 0  # hasty never checks
    assert scvd["scripted/wrong-then-repaired"]["W2R"] > 0  # wrong candidate, repaired
    sec = json.loads((out / "security/summary.json").read_text())["metrics"]
    assert sec["scripted/secure-minded"]["sec_pass"] > sec["scripted/functional-only"]["sec_pass"]
    assert any(line.startswith("run ") for line in lines)  # progress was shown
    assert seconds < 240


def test_demo_resumes_without_repeating_finished_work(demo_dir) -> None:
    from agentpost.demo.pipeline import run_demo

    path, _, _ = demo_dir
    before = (path.parent / "run/trajectories.jsonl").read_bytes()
    lines: list[str] = []
    assert run_demo(path.parent, limit=LIMIT, progress=lines.append) == path
    assert (path.parent / "run/trajectories.jsonl").read_bytes() == before
    assert not [
        x for x in lines if x.startswith("run ") and "/" in x.split(":")[0]
    ]  # no rollout ran
    assert "efficiency: up to date" in lines
    assert any(x.startswith("loopback: 0 rollouts ran (4 already finished)") for x in lines)


def test_demo_cli_prints_the_report_path_last(demo_dir) -> None:
    path, _, _ = demo_dir
    cmd = [
        sys.executable,
        "-c",
        "from agentpost.cli import main; main()",
        "demo",
        "--limit",
        str(LIMIT),
        "-o",
        str(path.parent),
    ]
    backend = "agentpost.sandbox.bwrap:BwrapBackend"  # the option reaches every stage
    proc = subprocess.run([*cmd, "--backend", backend], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == str(path)
    meta = json.loads((path.parent / "demo.json").read_text())
    assert meta["producer"]["args"]["backend"] == backend
    assert (
        json.loads((path.parent / "run/run.json").read_text())["producer"]["args"]["backend"]
        == backend
    )
    diag = json.loads((path.parent / "diagnose/metrics.json").read_text())
    assert diag["producer"]["args"]["backend"] == backend
    bad = subprocess.run([*cmd, "--backend", "nope"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown sandbox backend 'nope'" in bad.stderr


def test_the_import_stage_writes_what_agentpost_import_writes(demo_dir, tmp_path) -> None:
    """The demo's import.json is the document `agentpost import --summary` writes, from the
    same function: the same counts and formats for the same input."""
    out = demo_dir[0].parent
    summary, dest = tmp_path / "summary.json", tmp_path / "t.jsonl"
    cmd = [sys.executable, "-c", "from agentpost.cli import main; main()", "import",
           str(out / "run/trajectories.jsonl"), "-o", str(dest), "--summary", str(summary)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    mine, demo = json.loads(summary.read_text()), json.loads((out / "import.json").read_text())

    def counts(doc: dict) -> dict:
        return {k: v for k, v in doc.items() if k not in ("producer", "out")}

    assert counts(mine) == counts(demo) and mine["format"] == "agentpost.import/1"
    assert (
        mine["producer"]["name"]
        == demo["producer"]["name"]
        == "agentpost.trajectory.import_summary.import_to_file"
    )
    assert dest.read_bytes() == (out / "trajectories.jsonl").read_bytes()


def test_report_sections_carry_their_producers(demo_dir) -> None:
    html = demo_dir[0].read_text()
    for title in (
        "At a glance",
        "Rollouts and outcomes",
        "Token use per trajectory and per turn",
        "Token efficiency (HERO)",
        "Self-verification (SCVD)",
        "Security (SecureVibe)",
    ):
        assert f"<h2>{title}</h2>" in html
    for producer in (
        "agentpost.agent.run.run_groups",
        "agentpost.hero.analyze.analyze",
        "agentpost.hero.advantage.hero_advantages",
        "agentpost.agent.loop",
        "agentpost.scvd.pipeline.diagnose",
        "agentpost.security.pipeline.scripted_demo",
        "agentpost.security.attribution.attribute",
    ):
        assert producer in html, producer
    # the verdict comes first; the policies are compared against the best one
    assert html.index("<h2>Verdict") < html.index("<h2>Compare the agents of this run")
    agents = html[html.index("<h2>Compare the agents") :]
    assert "A = scripted/careful (" in agents and "B = scripted/wasteful (" in agents
    assert "A = scripted/secure-minded (" in agents and "B = scripted/functional-only (" in agents
    assert "Build next: HERO" in html and "Build next: SCVD" in html
    # graded security trajectories are judged by FuncPass/SecPass, never as unresolved terminal
    # runs; the insecure agent's verdict points at SecureVibe
    verdict = html[html.index("<h2>Verdict") : html.index("<h2>Compare the agents")]
    assert "scripted-functional-only" not in verdict and "Build next: SecureVibe" in verdict
    # scripted policies sample nothing; the loopback fake model's logprobs are labelled synthetic
    listed = html[html.index("No logprobs, so no entropy, for: ") :].split(".</p>")[0]
    no_logprobs = listed.split("for: ", 1)[1].split(", ")
    assert no_logprobs == sorted(no_logprobs)  # sorted: not the order rollouts finished in
    assert "scripted/hasty (efficiency.json)" in no_logprobs
    assert "Behaviour rate by entropy bucket: scripted/loopback-fake-model" in html
    assert "scripted/loopback-fake-model is a loopback fake model, not a real model" in html
    # every scripted agent goes by scripted/<name> and its advice is marked as an illustration
    names = re.findall(r'<div class="agent" data-agent="([^"]+)"', verdict)
    assert len(names) >= 7 and all(n.startswith("scripted/") for n in names), names
    assert verdict.count("a scripted reference policy, not a model to train") >= 5
    # the heuristic-judge caveat is in the SCVD section itself, before its numbers
    scvd = html[html.index("<h2>Self-verification (SCVD)</h2>") :]
    assert scvd.index("Caveat: Every judge is an offline rule seat, no model") < scvd.index(
        "Verification outcome matrix"
    )
    assert "judged by offline heuristics only" in html  # and flagged at a glance
    svgs = re.findall(r"<svg class=\"plot\".*?</svg>", html, flags=re.S)
    assert len(svgs) >= 12
    for svg in svgs:
        ET.fromstring(svg)  # every plot is well-formed XML
    assert "Not run:" not in html and "Sections without data: none." in html
    for plot in (
        "Tokens per trajectory",
        "Unproductive turns by kind",
        "HERO advantage per rollout",
        "Seven SCVD metrics",
        "those with a candidate",
        "FuncPass and SecPass per CWE",
        "functionally correct (95% CI)",
    ):
        assert plot in html, plot


def _check_in_chromium(report: Path) -> int:
    from PIL import Image

    res = load_report(report, CHROMIUM, width=1280)
    assert res.console_errors == []
    assert res.overflowing_tables == []  # every table, opened, fits a 1280 px window
    assert res.requests == [report.resolve().as_uri()]  # nothing but the file itself
    html = report.read_text()
    assert len(res.plots) == html.count('<svg class="plot"') > 0
    shot = Image.open(io.BytesIO(res.screenshot_png)).convert("L")
    for x, y, w, h, elements in res.plots:
        assert w > 100 and h > 80 and elements > 5
        body = shot.crop((int(x), int(y) + 24, int(x + w), int(y + h)))  # below the title
        dark = sum(body.histogram()[:200])
        assert dark > 0.01 * body.width * body.height, (x, y, w, h)
    return len(res.plots)


@needs_chromium
def test_demo_report_renders_in_headless_chromium(demo_dir) -> None:
    assert _check_in_chromium(demo_dir[0]) >= 12


@needs_chromium
def test_entropy_plots_render_when_logprobs_exist(logprob_dir: Path) -> None:
    report = render_run_dir(logprob_dir)
    html = report.read_text()
    assert "Behaviour rate by entropy bucket" in html and "No logprobs" not in html
    assert _check_in_chromium(report) >= 4


def test_current_cli_outputs_of_each_area_render(demo_dir, tmp_path: Path) -> None:
    """Each area's CLI output as a user saves it (current shapes), rendered together."""
    demo = demo_dir[0].parent
    cli = [sys.executable, "-c", "from agentpost.cli import main; main()"]
    runs = (
        ("eff.json", ["efficiency", str(demo / "run/trajectories.jsonl"), "--json"]),
        (
            "adv.json",
            [
                "hero",
                "advantages",
                str(demo / "hero_groups.json"),
                "--json",
                "--ablation",
                "no-fine",
            ],
        ),
        ("attr.json", ["security", "attribute", str(demo / "security/labels.jsonl"), "--json"]),
    )
    for name, args in runs:
        proc = subprocess.run([*cli, *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        (tmp_path / name).write_text(proc.stdout)
    shutil.copytree(demo / "diagnose", tmp_path / "diag", ignore=shutil.ignore_patterns("*.sqlite"))
    adv = json.loads((tmp_path / "adv.json").read_text())
    assert {"id", "resolved", "tokens", "p", "gate"} <= set(adv["rollouts"][0])
    # the demo's preview is exactly what the CLI computes from the groups file it wrote
    preview = json.loads((demo / "hero_advantages.json").read_text())
    assert "--ablation no-fine" in json.loads((demo / "hero_groups.json").read_text())["note"]
    assert [r["turn_advantages"] for r in adv["rollouts"]] == [
        r["turn_advantages"] for r in preview["rollouts"]
    ]
    html = render_run_dir(tmp_path).read_text()
    assert "Not run:" in html.split("<h2>Token efficiency (HERO)</h2>")[0]  # no run.json here
    for part in ("Token efficiency (HERO)", "Self-verification (SCVD)", "Security (SecureVibe)"):
        assert f'<h2>{part}</h2><p class="skip">' not in html, part
    # `hero advantages` rows carry their agent: one bar per task and agent
    # (rollouts are listed in the order they finished: two run at once, so find hasty's)
    first = next(r for r in adv["rollouts"] if r["agent"] == "scripted/hasty")
    assert "HERO advantage per rollout (mean over its turns), per task and agent</text>" in html
    assert f"{first['group']} · hasty: " in html
    # per group: its four rollouts (one per reference policy), three resolved (not hasty)
    assert f'<td class="l">{first["group"]}</td><td class="">4</td><td class="">3</td>' in html
    assert "Caveat: Every judge is an offline rule seat, no model" in html
    assert "Behaviour rates on functionally correct trajectories" in html
    assert "read-only turns" in html and "agentpost.hero.analyze.analyze 0.1.0" in html
