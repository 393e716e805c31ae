#!/usr/bin/env bash
# A plausible WRONG solution: runs uniq -c without sorting first, so it counts runs of adjacent lines, not totals.
set -uo pipefail
cd /app
awk '{print $1}' access.log | uniq -c | sort -rn | head -3 | awk '{print $1, $2}' > top_ips.txt
