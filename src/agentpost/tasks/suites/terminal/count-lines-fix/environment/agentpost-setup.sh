#!/usr/bin/env bash
set -euo pipefail
# Files the package cannot ship as data (hidden, spaces, no packaged suffix).
mkdir -p "$(dirname 'sample/b c.txt')"
cat > 'sample/b c.txt' <<'AGENTPOST_EOF'
1
2
3
AGENTPOST_EOF
mkdir -p "$(dirname 'sample/sub dir/d.txt')"
cat > 'sample/sub dir/d.txt' <<'AGENTPOST_EOF'
1
AGENTPOST_EOF
mkdir -p "$(dirname 'sample/sub dir/skip.md')"
cat > 'sample/sub dir/skip.md' <<'AGENTPOST_EOF'
1
2
AGENTPOST_EOF
