"""Hidden evaluator for top-client-ips."""
import collections
c = collections.Counter(l.split()[0] for l in open("/app/access.log") if l.strip())
expected = [f"{n} {ip}" for ip, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
try:
    got = [l.rstrip("\n") for l in open("/app/top_ips.txt") if l.strip()]
except FileNotFoundError:
    raise SystemExit("top_ips.txt missing")
if got != expected:
    raise SystemExit(f"got {got}, expected {expected}")
print("ok")
