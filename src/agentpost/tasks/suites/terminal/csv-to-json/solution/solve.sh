#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
python3 - <<'EOF'
import csv, json
rows = [{"name": r["name"], "age": int(r["age"]), "city": r["city"]}
        for r in csv.DictReader(open("people.csv", newline=""))]
json.dump(rows, open("people.json", "w"), indent=2)
EOF
