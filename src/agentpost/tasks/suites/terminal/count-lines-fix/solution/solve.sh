#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
cat > count_lines.sh <<'EOF'
#!/usr/bin/env bash
# Print the total number of lines in all *.txt files under the directory $1.
total=0
while IFS= read -r -d '' f; do
  n=$(wc -l < "$f")
  total=$((total + n))
done < <(find "$1" -type f -name '*.txt' -print0)
echo "$total"
EOF
