"""Hidden evaluator for log-error-counts."""
import collections
want = collections.Counter()
for line in open("/app/app.log"):
    parts = line.split()
    if len(parts) > 2 and parts[1] == "ERROR":
        want[parts[2].strip("[]")] += 1
rows = sorted(want.items(), key=lambda kv: (-kv[1], kv[0]))
expected = "".join(f"{s} {n}\n" for s, n in rows)
try:
    got = open("/app/error_counts.txt").read()
except FileNotFoundError:
    raise SystemExit("error_counts.txt missing")
if got.strip().splitlines() != expected.strip().splitlines():
    raise SystemExit(f"wrong counts:\n{got}\nexpected:\n{expected}")
print("ok")
