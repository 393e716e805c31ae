#!/usr/bin/env bash
# A plausible WRONG solution: computes page_count as n // per_page + 1, wrong when n is a multiple of per_page.
set -uo pipefail
cd /app
python3 - <<'EOF'
s = open("pager.py").read()
s = s.replace("return n_items // per_page", "return n_items // per_page + 1")
s = s.replace("start = page * per_page", "start = (page - 1) * per_page")
open("pager.py", "w").write(s)
EOF
