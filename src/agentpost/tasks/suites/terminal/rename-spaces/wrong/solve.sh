#!/usr/bin/env bash
# A plausible WRONG solution: iterates over $(ls), so names with spaces are split into words and never renamed.
set -uo pipefail
cd /app
cat > fix_names.sh <<'EOF'
#!/usr/bin/env bash
dir=$1
for name in $(ls "$dir"); do
  if [ -f "$dir/$name" ]; then
    mv "$dir/$name" "$dir/${name// /_}" 2>/dev/null
  fi
done
EOF
chmod +x fix_names.sh
bash fix_names.sh /app/inbox
