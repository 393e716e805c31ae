"""`agentpost security ...`: check the security suite, grade candidates, annotate behaviours,
compute attribution statistics, print hints, run the scripted demo, build the Suite data, route
and train. One module per job: ``grading`` (check, grade, metrics), ``labels`` (annotate,
attribute), ``demo``, ``data`` (build-suite, route), ``training`` (rl, hg, hint).

Layer: edges.
"""

from __future__ import annotations

import typer

security_app = typer.Typer(
    help="SecureVibe: security suite, SecPass grading, behaviour attribution.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    from agentpost.commands.security import data, demo, grading, labels, training

    for name, command in (
        ("check", grading.check_command),
        ("grade", grading.grade_command),
        ("attribute", labels.attribute_command),
        ("hint", training.hint_command),
        ("demo", demo.demo_command),
        ("annotate", labels.annotate_command),
        ("metrics", grading.metrics_command),
        ("build-suite", data.build_suite_command),
        ("route", data.route_command),
        ("rl", training.rl_command),
        ("hg", training.hg_command),
    ):
        security_app.command(name)(command)
    app.add_typer(security_app, name="security")
