#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
python3 - <<'EOF'
import csv, json
orders = sorted(json.load(open("orders.json")), key=lambda o: int(o["id"]))
with open("orders.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["id", "customer", "total", "item_count"])
    for o in orders:
        w.writerow([o["id"], o["customer"], f"{o['total']:.2f}", len(o["items"])])
EOF
