#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
cat > greet.sh <<'EOF'
#!/usr/bin/env bash
usage() { echo "usage: greet.sh [-u] [-n NAME]" >&2; exit 2; }
name=World
upper=0
while getopts ":un:" opt; do
  case "$opt" in
    u) upper=1 ;;
    n) name=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
msg="Hello, $name!"
if [ "$upper" = 1 ]; then msg=$(printf '%s' "$msg" | tr '[:lower:]' '[:upper:]'); fi
printf '%s\n' "$msg"
EOF
chmod +x greet.sh
