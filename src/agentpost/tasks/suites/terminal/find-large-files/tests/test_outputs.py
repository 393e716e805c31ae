"""Hidden evaluator for find-large-files."""
import os
want = []
for root, _, names in os.walk("/app/data"):
    for n in names:
        p = os.path.join(root, n)
        if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) > 2000:
            want.append(os.path.relpath(p, "/app/data"))
want = sorted(want, key=lambda s: s.encode())
try:
    got = open("/app/large_files.txt").read().splitlines()
except FileNotFoundError:
    raise SystemExit("large_files.txt missing")
if got != want:
    raise SystemExit(f"got {got} want {want}")
print("ok")
