#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
python3 - <<'EOF'
import sqlite3
c = sqlite3.connect("shop.db")
name, total = c.execute(
    "SELECT c.name, SUM(o.amount) FROM orders o JOIN customers c ON c.id = o.customer_id "
    "GROUP BY c.id ORDER BY SUM(o.amount) DESC LIMIT 1").fetchone()
open("top_customer.txt", "w").write(f"{name} {total:.2f}\n")
EOF
