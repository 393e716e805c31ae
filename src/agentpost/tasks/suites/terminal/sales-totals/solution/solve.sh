#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
python3 - <<'EOF'
import csv, json
tot = {}
for r in csv.DictReader(open("sales.csv")):
    tot[r["region"]] = tot.get(r["region"], 0) + float(r["amount"])
json.dump({k: round(tot[k], 2) for k in sorted(tot)}, open("totals.json", "w"), indent=2)
EOF
