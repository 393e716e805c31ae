#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
cat > fix_names.sh <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
dir=$1
for path in "$dir"/*; do
  [ -f "$path" ] || continue
  name=$(basename -- "$path")
  new=${name// /_}
  [ "$new" = "$name" ] || mv -- "$path" "$dir/$new"
done
EOF
chmod +x fix_names.sh
bash fix_names.sh /app/inbox
