#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
awk '$2 == "ERROR" { gsub(/[][]/, "", $3); n[$3]++ } END { for (s in n) print s, n[s] }' app.log \
  | sort -k2,2nr -k1,1 > error_counts.txt
