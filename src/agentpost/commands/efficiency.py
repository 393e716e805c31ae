"""`agentpost efficiency FILE.jsonl...` (HERO analyses) and `agentpost hero advantages GROUPS.json`.

The first prints the ``agentpost.efficiency/1`` document (see ``agentpost.hero.analyze``)
with ``--json``, else readable tables. The second prints, with ``--json``, one advantage per turn
and the gate per rollout: ``{"rollouts": [{"group", "turn_advantages": [...], "gate": w, "p",
"resolved", "tokens"}], "clipped_fraction", ...}`` (``id`` is passed through when the input has
one), else a table.

Layer: edges.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import typer

from agentpost.commands._options import (
    agent_option,
    config,
    price_option,
    prices,
    read_trajectory_files,
    task_option,
)
from agentpost.commands._progress import bar, progress_option
from agentpost.errors import InputError
from agentpost.hero.config import ABLATIONS
from agentpost.intervals import RESAMPLES

# b.11 variants as the spec spells them ("no-HPO", "random-20%"); underscores work too
ABLATION_NAMES = [k.replace("_", "-") + ("%" if k.endswith("_20") else "") for k in ABLATIONS]

hero_app = typer.Typer(
    help="HERO training signal: inspect the hierarchical advantage.", no_args_is_help=True
)


def _window(value: str) -> str | int:
    if value in ("since_last_write", "anywhere"):
        return value
    try:
        turns = int(value)
    except ValueError:
        turns = -1
    if turns < 0:
        raise InputError(
            None,
            "--repeat-window",
            f"expected since_last_write, anywhere or a number of turns >= 0, got {value!r}",
        )
    return turns


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError(path, None, "no such file")
    if not path.is_file():
        raise InputError(path, None, "not a file")


def efficiency(
    files: list[Path] = typer.Argument(..., help="Canonical trajectory JSONL files."),
    as_json: bool = typer.Option(False, "--json", help="Print the full JSON document."),
    out: Path | None = typer.Option(None, "-o", "--out", help="Also write the JSON document here."),
    repeat_window: str = typer.Option(
        "since_last_write", "--repeat-window", help="since_last_write | anywhere | N turns."
    ),
    entropy_topk: int = typer.Option(10, "--entropy-topk", help="Top-k log-probs per token."),
    entropy_tail: bool = typer.Option(
        False, "--entropy-tail", help="Tail-bucket entropy instead of renormalising top-k."
    ),
    entropy_tokens: str = typer.Option("all", "--entropy-tokens", help="all | action_only."),
    price_in: float | None = price_option("--price-in"),
    price_cached: float | None = price_option("--price-cached"),
    price_out: float | None = price_option("--price-out"),
    price_unit: str = typer.Option(
        "relative", "--price-unit", help="Label of the prices (default: relative, 1 and 1)."
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", help="Model whose per-token cost is 1.0."
    ),
    bootstrap: int = typer.Option(
        RESAMPLES, "--bootstrap", help="Bootstrap resamples for the interval of r (0: none)."
    ),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    agents: list[str] | None = agent_option(),
    tasks: list[str] | None = task_option(),
    progress: bool | None = progress_option(),
) -> None:
    """Token efficiency, unproductive behaviours and entropy association per trajectory and agent."""
    from agentpost.hero.analyze import Analysis
    from agentpost.trajectory.inputs import Stream

    if entropy_tokens not in ("all", "action_only"):
        raise InputError(
            None, "--entropy-tokens", f"expected all or action_only, got {entropy_tokens!r}"
        )
    for flag, value in (("--entropy-topk", entropy_topk - 1), ("--bootstrap", bootstrap)):
        if value < 0:
            raise InputError(None, flag, "must be at least " + ("1" if "topk" in flag else "0"))
    priced = prices(price_in, price_cached, price_out, price_unit)  # None: relative 1 and 1
    acc = Analysis(repeat_window=_window(repeat_window), entropy_topk=entropy_topk,
                   entropy_renorm=not entropy_tail, entropy_tokens=entropy_tokens, prices=priced,
                   baseline=baseline, n_boot=bootstrap, seed=seed,
                   inputs=[str(f) for f in files])  # fmt: skip
    stream = Stream([(str(f), f) for f in files], agents, tasks)
    with bar("reading", progress, as_json) as stream.progress:
        for _, t in stream:  # one at a time: only each trajectory's row is kept
            acc.add(t)
        if not stream.read:
            raise InputError(files[0], None, "no trajectories: nothing to analyse")
        stream.finish()
        models = sorted(m for m in acc.sums if m)
        if baseline is not None and baseline not in models:  # else rel.cost is silently all "-"
            known = ", ".join(models[:8]) + (", ..." if len(models) > 8 else "")
            raise InputError(
                None, "--baseline", f"no trajectory of model {baseline!r} (models: {known})"
            )
        if stream.progress is not None:
            stream.progress.stage("bootstrap and groups")
        doc = acc.document()
    if out is not None:
        from agentpost.documents.write import atomic_write

        atomic_write(out, (c.encode() for c in _json_chunks(doc, "\n")))  # refuses a FIFO
    if as_json:
        for chunk in _json_chunks(doc, "\n"):
            sys.stdout.write(chunk)
        sys.stdout.flush()
    else:
        from agentpost.hero.tables import print_efficiency

        print_efficiency(doc)


def _json_chunks(doc: dict, end: str = "") -> Iterator[str]:
    """``json.dumps(doc, ensure_ascii=False) + end`` in pieces, the trajectory rows one at a
    time (100,000 rows never make one string)."""
    yield "{"
    for k, (key, value) in enumerate(doc.items()):
        yield (", " if k else "") + json.dumps(key) + ": "
        if key == "trajectories" and isinstance(value, list):
            yield "["
            for i, row in enumerate(value):
                yield (", " if i else "") + json.dumps(row, ensure_ascii=False)
            yield "]"
        else:
            yield json.dumps(value, ensure_ascii=False)
    yield "}" + end


def _read_trajectories(files: list[Path], tasks: list[str] | None = None) -> list:
    return read_trajectory_files(files, "no trajectories to group", None, tasks)[0]


def _groups(files: list[Path], pool_agents: bool, agents: list[str] | None = None,
            tasks: list[str] | None = None) -> dict:  # fmt: skip
    """The HERO groups document of canonical trajectory files (grouped by task). ``agents``:
    only their rollouts are kept; with ``pool_agents`` the groups are formed from every agent's
    rollouts of a task (they are the baseline), the groups holding none of ``agents``' rollouts
    are left out, and ``selected`` lists the ids of ``agents``' rollouts."""
    from agentpost.documents.formats import producer
    from agentpost.hero.analyze import analyze
    from agentpost.hero.groups import GroupingError, hero_groups
    from agentpost.trajectory.select import labels, select

    trajs = _read_trajectories(files, tasks)
    mine = {t.id for t in select(trajs, agents)} if agents else None
    if mine is not None and not pool_agents:
        trajs = [t for t in trajs if t.id in mine]
    rows = analyze(trajs, n_boot=0)["trajectories"]
    try:
        doc = hero_groups(trajs, rows, pool_agents=pool_agents)
    except GroupingError as e:
        raise InputError(files[0] if len(files) == 1 else None, None, str(e)) from None
    if mine is not None and pool_agents:
        keep = {r["group"] for r in doc["rollouts"] if r["id"] in mine}
        if not keep:
            raise InputError(files[0] if len(files) == 1 else None, "--agent",
                             "no rollout of the named agents is in a HERO group")  # fmt: skip
        doc["rollouts"] = [r for r in doc["rollouts"] if r["group"] in keep]
        doc["groups"] = len(keep)
        doc["selected"] = sorted(i for i in mine if any(r["id"] == i for r in doc["rollouts"]))
        doc["agents"] = sorted({labels(trajs)[i] for i in mine})
    doc["producer"] = producer(hero_groups, inputs=[str(f) for f in files],
                               pool_agents=pool_agents, agents=agents, tasks=tasks)  # fmt: skip
    return doc


@hero_app.command("groups", no_args_is_help=True)
def groups_cmd(
    files: list[Path] = typer.Argument(..., help="Canonical trajectory JSONL files."),
    out: Path | None = typer.Option(None, "-o", "--out", help="Write the groups JSON here."),
    as_json: bool = typer.Option(False, "--json", help="Print the groups JSON."),
    pool_agents: bool = typer.Option(
        False, "--pool-agents", help="One group per task across agents (default: agent and task)."
    ),
    agents: list[str] | None = agent_option(),
    tasks: list[str] | None = task_option(),
) -> None:
    """Build the `hero advantages` input from any trajectories: rollouts grouped by task, entropy from logprobs where every turn has them; refuses (saying why) what cannot be grouped."""
    doc = _groups(files, pool_agents, agents, tasks)
    if out is not None:
        from agentpost.documents.write import write_json

        write_json(out, doc, indent=None)
    if as_json:
        typer.echo(json.dumps(doc))
    else:
        left = ", ".join(f"{k}: {v}" for k, v in doc["skipped"].items()) or "none"
        typer.echo(f"{len(doc['rollouts'])} rollouts in {doc['groups']} groups (by "
                   f"{doc['grouped_by']}); left out: {left}"
                   + ("" if doc["has_entropy"] else "; no logprobs: use --ablation no-fine"))  # fmt: skip


def _load_input(path: Path, pool_agents: bool, agents=None, tasks=None) -> tuple[dict, list]:
    """A groups JSON document, or canonical trajectories (JSONL) grouped here."""
    _check_file(path)
    from agentpost.trajectory.io import read_regular

    raw = read_regular(path)  # a FIFO or device is refused, never read forever
    if b'"agentpost.trajectory/' in raw[:200]:
        doc = _groups([path], pool_agents, agents, tasks)
        ids = set(doc.get("selected") or (r["id"] for r in doc["rollouts"]))
        return doc, [t for t in _read_trajectories([path]) if t.id in ids]
    if agents or tasks:
        raise InputError(path, None, "--agent and --task select trajectories: give the "
                         "trajectories (JSONL), not a groups document")  # fmt: skip
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(path, f"byte {e.start}", "not UTF-8 text") from None
    except RecursionError:
        raise InputError(path, None, "JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        hint = ""
        if e.msg == "Extra data":  # JSONL, e.g. canonical trajectories
            hint = ' (expected one JSON document {"rollouts": [...]}, not JSONL; see --help)'
        raise InputError(path, f"line {e.lineno}", f"invalid JSON: {e.msg}{hint}") from None
    if not isinstance(data, dict):
        raise InputError(path, None, 'expected a JSON object {"rollouts": [...]}')
    return data, []


@hero_app.command("advantages", no_args_is_help=True)
def advantages(
    groups_file: Path = typer.Argument(
        ..., help="A groups JSON document (shape above), or canonical trajectories (JSONL)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    ablation: str | None = typer.Option(
        None, "--ablation", help="A HERO ablation: " + ", ".join(ABLATION_NAMES) + "."
    ),
    tau: float | None = typer.Option(None, "--tau", help="Gate threshold τ in [0, 1] (0.6)."),
    lam: float | None = typer.Option(None, "--lam", help="Gate ceiling λ >= 0 (0.3)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random-20% control."),
    export: str | None = typer.Option(
        None, "--export", help="trl (JSONL) or verl (Parquet): one training row per rollout."
    ),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="Write here: the --export rows, else the advantages JSON."
    ),
    pool_agents: bool = typer.Option(
        False,
        "--pool-agents",
        help="For trajectories: one group per task across agents (with --agent, the groups hold "
        "every agent's rollouts and the output only the named agent's).",
    ),
    agents: list[str] | None = agent_option(),
    tasks: list[str] | None = task_option(),
) -> None:
    """Per-turn HERO advantages and the gate of each rollout's group.

    Input, one JSON document (`agentpost hero groups` writes one; so does `agentpost demo`, as hero_groups.json), or canonical trajectories JSONL, grouped by agent and task on the fly:

    {"rollouts": [{"group", "resolved", "tokens", "turns": [{"entropy", "tokens"}]}]}

    Output with --json, one advantage per turn (all tokens of a turn share it):

    {"rollouts": [{"group", "turn_advantages", "gate", "p", "resolved", "tokens"}], ...}

    With --export trl|verl -o FILE: the conversations with their turn advantages, for training (needs trajectories as input, since the rows carry the messages).
    """
    import sys

    from agentpost.documents.formats import producer
    from agentpost.hero.advantage import hero_advantages
    from agentpost.hero.advantages_out import advantages_document
    from agentpost.hero.config import HeroConfig

    if export is not None and export not in ("trl", "verl"):
        raise InputError(None, "--export", f"expected trl or verl, got {export!r}")
    if export is not None and out is None:
        raise InputError(None, "--export", "needs -o/--out FILE")
    given = {k: v for k, v in (("tau", tau), ("lam", lam)) if v is not None}
    base = config(HeroConfig, {"tau": "--tau", "lam": "--lam"}, seed=seed, **given)
    data, trajs = _load_input(groups_file, pool_agents, agents, tasks)
    if export is not None and not trajs:
        raise InputError(groups_file, None, "--export needs canonical trajectories (JSONL) as "
                         "input: the training rows carry each rollout's messages")  # fmt: skip
    if ablation is None and data.get("has_entropy") is False:
        ablation = "no-fine"
        print("note: no logprobs in these trajectories: the fine low-entropy turn term is off "
              "(--ablation no-fine)", file=sys.stderr)  # fmt: skip
    name = _ablation(ablation)
    cfg = base.with_ablation(name)
    made_by = producer(hero_advantages, input=str(groups_file), ablation=name, agents=agents,
                       tasks=tasks, **cfg.kwargs())  # fmt: skip
    try:
        doc = advantages_document(data, cfg, producer=made_by, carried=("id", "agent"))
    except ValueError as e:
        raise InputError(groups_file, None, str(e)) from None
    if data.get("selected") is not None:  # --agent with --pool-agents: the others were baseline
        chosen = set(data["selected"])
        doc["rollouts"] = [r for r in doc["rollouts"] if r.get("id") in chosen]
    if export is not None:
        from agentpost.train.hero_export import rows, write

        out_rows = rows(trajs, doc)
        write(out_rows, out, export, trajs)  # type: ignore[arg-type]
        print(f"{len(out_rows)} {export} rows written to {out}", file=sys.stderr)
    elif out is not None:
        from agentpost.documents.write import write_json

        write_json(out, doc, indent=None)
    if as_json:
        typer.echo(json.dumps(doc))
    elif export is None:
        from agentpost.hero.tables import print_advantages

        print_advantages(doc)


def _ablation(value: str | None) -> str | None:
    """The ``ABLATIONS`` key of a b.11 variant, spelled as in the spec or with underscores."""
    if value is None:
        return None
    key = value.strip().lower().replace("-", "_").removesuffix("%")
    if key not in ABLATIONS:
        raise InputError(
            None, "--ablation", f"unknown {value!r}; known: {', '.join(ABLATION_NAMES)}"
        )
    return key


def register(app: typer.Typer) -> None:
    app.command("efficiency", no_args_is_help=True)(efficiency)
    app.add_typer(hero_app, name="hero")
