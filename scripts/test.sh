#!/usr/bin/env bash
# The checks CI runs: lint, format check, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
# a compiled import path that no longer matches its sources is rebuilt, so the tests that compare
# it with the interpreted one run here too (without a compiler they skip, saying why)
if .venv/bin/python -c 'from agentpost.trajectory import _native as n; raise SystemExit("stale" not in n.status())'; then
  .venv/bin/python scripts/compile_native.py || echo "warning: the compiled import path was not rebuilt" >&2
fi
.venv/bin/python -m pytest -q "$@"
