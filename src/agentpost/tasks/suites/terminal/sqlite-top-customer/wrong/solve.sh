#!/usr/bin/env bash
# A plausible WRONG solution: ranks customers by number of orders instead of total amount.
set -uo pipefail
cd /app
python3 - <<'EOF'
import sqlite3
c = sqlite3.connect("shop.db")
name, total = c.execute(
    "SELECT c.name, SUM(o.amount) FROM orders o JOIN customers c ON c.id = o.customer_id "
    "GROUP BY c.id ORDER BY COUNT(*) DESC LIMIT 1").fetchone()
open("top_customer.txt", "w").write(f"{name} {total:.2f}\n")
EOF
