#!/usr/bin/env bash
# A plausible WRONG solution: fixes the syntax and the port but leaves debug as the string "false".
set -uo pipefail
cd /app
cat > config.json <<'EOF'
{
  "name": "inventory",
  "port": 8080,
  "debug": "false",
  "hosts": ["db1.internal", "db2.internal"],
  "retries": 3
}
EOF
