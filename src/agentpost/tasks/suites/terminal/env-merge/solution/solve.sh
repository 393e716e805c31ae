#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
python3 - <<'EOF'
def read(p):
    out = {}
    for line in open(p):
        line = line.rstrip("\n")
        if line.strip() and not line.startswith("#"):
            k, v = line.split("=", 1)
            out[k] = v
    return out
base, local = read(".env.defaults"), read(".env.local")
merged = {k: local.get(k, v) for k, v in base.items()}
merged.update({k: v for k, v in local.items() if k not in base})
open(".env", "w").write("".join(f"{k}={v}\n" for k, v in merged.items()))
EOF
