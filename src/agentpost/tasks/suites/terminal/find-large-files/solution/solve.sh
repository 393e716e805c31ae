#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
cd data && find . -type f -size +2000c | sed 's|^\./||' | LC_ALL=C sort > ../large_files.txt
