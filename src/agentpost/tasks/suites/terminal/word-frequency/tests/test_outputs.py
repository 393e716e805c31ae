"""Hidden evaluator for word-frequency."""
import collections, re
words = re.findall(r"[a-z]+", open("/app/text.txt").read().lower())
c = collections.Counter(words)
want = [f"{w} {n}" for w, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:10]]
try:
    got = [l.strip() for l in open("/app/top10.txt") if l.strip()]
except FileNotFoundError:
    raise SystemExit("top10.txt missing")
if got != want:
    raise SystemExit(f"got {got} want {want}")
print("ok")
