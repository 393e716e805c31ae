#!/usr/bin/env bash
set -euo pipefail
# Files the package cannot ship as data (hidden, spaces, no packaged suffix).
mkdir -p "$(dirname 'project/.env')"
cat > 'project/.env' <<'AGENTPOST_EOF'
A=1
AGENTPOST_EOF
mkdir -p "$(dirname 'project/.cache/blob')"
cat > 'project/.cache/blob' <<'AGENTPOST_EOF'
b
AGENTPOST_EOF
