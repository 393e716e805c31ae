#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
cat > config.json <<'EOF'
{
  "name": "inventory",
  "port": 8080,
  "debug": false,
  "hosts": ["db1.internal", "db2.internal"],
  "retries": 3
}
EOF
