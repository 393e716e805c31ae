#!/usr/bin/env bash
# The checks CI runs: lint, format check, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/python -m pytest -q "$@"
