#!/usr/bin/env bash
set -euo pipefail
python3 - <<'EOF'
import sqlite3
c = sqlite3.connect("shop.db")
c.executescript('''
CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL);
INSERT INTO customers VALUES (1,'alice'),(2,'bob'),(3,'carol');
INSERT INTO orders(customer_id, amount) VALUES
  (1,10.5),(1,12.0),(1,9.99),(1,15.25),(1,8.0),(2,120.0),(2,95.5),(3,30.0),(3,44.1);
''')
c.commit()
EOF
