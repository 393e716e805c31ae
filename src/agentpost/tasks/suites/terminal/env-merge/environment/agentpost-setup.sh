#!/usr/bin/env bash
set -euo pipefail
# Files the package cannot ship as data (hidden, spaces, no packaged suffix).
mkdir -p "$(dirname '.env.defaults')"
cat > '.env.defaults' <<'AGENTPOST_EOF'
# defaults for every deployment
APP_ENV=production
DATABASE_URL=postgres://app:app@localhost/app?sslmode=disable
LOG_LEVEL=info

CACHE_TTL=300
AGENTPOST_EOF
mkdir -p "$(dirname '.env.local')"
cat > '.env.local' <<'AGENTPOST_EOF'
# local overrides
LOG_LEVEL=debug
DATABASE_URL=postgres://dev:s3cr3t@db.local/app?sslmode=require&connect_timeout=5
FEATURE_FLAGS=search=on,beta=off
AGENTPOST_EOF
