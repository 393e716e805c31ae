#!/usr/bin/env bash
# A plausible WRONG solution: fixes the division but only drops empty strings from split(' '), so tabs and newlines still glue words together.
set -uo pipefail
cd /app
python3 - <<'EOF'
p = "textstats/__init__.py"
s = open(p).read()
s = s.replace('return len(text.split(" "))', 'return len([w for w in text.split(" ") if w])')
s = s.replace("sum(len(w) for w in words) // len(words)", "sum(len(w) for w in words) / len(words)")
open(p, "w").write(s)
EOF
