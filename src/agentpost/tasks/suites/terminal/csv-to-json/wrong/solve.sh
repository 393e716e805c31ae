#!/usr/bin/env bash
# A plausible WRONG solution: uses csv.DictReader but leaves age as a string.
set -uo pipefail
cd /app
python3 - <<'EOF'
import csv, json
rows = list(csv.DictReader(open("people.csv", newline="")))
json.dump(rows, open("people.json", "w"), indent=2)
EOF
