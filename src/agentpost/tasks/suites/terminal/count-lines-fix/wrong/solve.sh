#!/usr/bin/env bash
# A plausible WRONG solution: fixes the quoting but still only globs the top level, missing nested files.
set -uo pipefail
cd /app
cat > count_lines.sh <<'EOF'
#!/usr/bin/env bash
# Print the total number of lines in all *.txt files under the directory $1.
total=0
for f in "$1"/*.txt; do
  n=$(wc -l < "$f")
  total=$((total + n))
done
echo "$total"
EOF
