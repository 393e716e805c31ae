"""Hidden evaluator for dedupe-preserve-order."""
seen, want = set(), []
for l in open("/app/emails.txt").read().splitlines():
    if l not in seen:
        seen.add(l); want.append(l)
try:
    got = open("/app/unique.txt").read().splitlines()
except FileNotFoundError:
    raise SystemExit("unique.txt missing")
if got != want:
    raise SystemExit(f"got {got}")
print("ok")
