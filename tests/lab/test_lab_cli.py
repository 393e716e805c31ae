"""`agentpost lab hero` refuses an unknown variant before any work starts, naming the flag."""

from __future__ import annotations

from typer.testing import CliRunner

from agentpost.cli import _register, app
from agentpost.errors import InputError


def test_unknown_variant_is_an_input_error_before_anything_runs(tmp_path):
    _register()
    r = CliRunner().invoke(app, ["lab", "hero", "-o", str(tmp_path / "x"), "--variants",
                                 "grpo,nope"])  # fmt: skip
    assert r.exit_code != 0 and isinstance(r.exception, InputError)  # main() prints it in one line
    assert r.exception.where == "--variants" and "'nope'" in str(r.exception)
    assert "HeroLabConfig.variants must be" in str(r.exception)
    assert not (tmp_path / "x").exists()
