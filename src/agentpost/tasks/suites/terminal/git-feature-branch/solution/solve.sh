#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
cd repo
if git show-ref -q --verify refs/heads/feature/greeting; then
  # an earlier attempt made the branch: move it back to main, keeping the changes unstaged
  git checkout -q feature/greeting && git reset -q main
else
  git checkout -q -b feature/greeting
fi
git add greeting.txt
git commit -q -m "Update greeting"
