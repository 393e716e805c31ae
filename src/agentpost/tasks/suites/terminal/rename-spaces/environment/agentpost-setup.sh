#!/usr/bin/env bash
set -euo pipefail
# Files the package cannot ship as data (hidden, spaces, no packaged suffix).
mkdir -p "$(dirname 'inbox/quarterly report.txt')"
cat > 'inbox/quarterly report.txt' <<'AGENTPOST_EOF'
q1
AGENTPOST_EOF
mkdir -p "$(dirname 'inbox/photo  2024 01.jpg')"
cat > 'inbox/photo  2024 01.jpg' <<'AGENTPOST_EOF'
jpg
AGENTPOST_EOF
mkdir -p "$(dirname 'inbox/sub dir/keep me.txt')"
cat > 'inbox/sub dir/keep me.txt' <<'AGENTPOST_EOF'
k
AGENTPOST_EOF
