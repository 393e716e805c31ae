#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
awk '$1 >= "2024-03-01T10:00:00" && $1 <= "2024-03-01T11:00:00"' events.log > window.log
