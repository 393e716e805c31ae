#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
tr 'A-Z' 'a-z' < text.txt | tr -cs 'a-z' '\n' | grep . | sort | uniq -c \
  | sort -k1,1nr -k2,2 | head -10 | awk '{print $2, $1}' > top10.txt
