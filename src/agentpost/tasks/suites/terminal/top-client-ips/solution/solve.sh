#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
awk '{print $1}' access.log | sort | uniq -c | sort -k1,1nr -k2,2 | head -3 | awk '{print $1, $2}' > top_ips.txt
