#!/usr/bin/env bash
# A plausible WRONG solution: greps for ERROR anywhere in the line, so INFO lines mentioning ERROR are counted.
set -uo pipefail
cd /app
grep 'ERROR' app.log | sed -E 's/.*\[([a-z]+)\].*/\1/' | sort | uniq -c \
  | awk '{print $2, $1}' | sort -k2,2nr -k1,1 > error_counts.txt
