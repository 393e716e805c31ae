#!/usr/bin/env bash
# A plausible WRONG solution: uses an exclusive upper bound (<), dropping the line at exactly 11:00:00.
set -uo pipefail
cd /app
awk '$1 >= "2024-03-01T10:00:00" && $1 < "2024-03-01T11:00:00"' events.log > window.log
