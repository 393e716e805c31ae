#!/usr/bin/env bash
# A plausible WRONG solution: sums floats without rounding, so 0.1 + 0.2 is written as 0.30000000000000004.
set -uo pipefail
cd /app
python3 - <<'EOF'
import csv, json
tot = {}
for r in csv.DictReader(open("sales.csv")):
    tot[r["region"]] = tot.get(r["region"], 0) + float(r["amount"])
json.dump(dict(sorted(tot.items())), open("totals.json", "w"), indent=2)
EOF
