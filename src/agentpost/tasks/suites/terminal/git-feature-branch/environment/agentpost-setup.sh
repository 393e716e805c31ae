#!/usr/bin/env bash
set -euo pipefail
mkdir -p repo && cd repo
git init -q -b main
git config user.name "Task Author"
git config user.email "author@example.com"
printf '# demo\n' > README.md
printf 'hello\n' > greeting.txt
printf 'todo: nothing\n' > notes.txt
git add -A && git commit -q -m "Initial commit"
printf 'hello, world\n' > greeting.txt
printf 'todo: write docs\n' > notes.txt
