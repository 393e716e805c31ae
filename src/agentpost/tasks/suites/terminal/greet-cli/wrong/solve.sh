#!/usr/bin/env bash
# A plausible WRONG solution: parses options positionally, so -u before -n is treated as a stray argument order and the name is lost.
set -uo pipefail
cd /app
cat > greet.sh <<'EOF'
#!/usr/bin/env bash
name=World
upper=0
if [ "$1" = "-n" ]; then name="$2"; shift 2; fi
if [ "$1" = "-u" ]; then upper=1; shift; fi
if [ -n "$1" ]; then echo "usage: greet.sh [-u] [-n NAME]" >&2; exit 2; fi
msg="Hello, $name!"
if [ "$upper" = 1 ]; then msg=$(printf '%s' "$msg" | tr '[:lower:]' '[:upper:]'); fi
printf '%s\n' "$msg"
EOF
chmod +x greet.sh
