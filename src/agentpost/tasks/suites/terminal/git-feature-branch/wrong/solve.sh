#!/usr/bin/env bash
# A plausible WRONG solution: commits with -a, which also commits the notes.txt change.
set -uo pipefail
cd /app
cd repo
git checkout -q -b feature/greeting
git commit -q -am "Update greeting"
