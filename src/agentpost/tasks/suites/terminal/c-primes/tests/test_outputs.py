"""Hidden evaluator for c-primes."""
import os, subprocess
# Code the agent wrote runs as the agent (agentpost's verifier gives $AGENTPOST_AS_AGENT: the
# agent's uid, no write to /logs or /tests, no signal to this process); elsewhere, directly.
AS_AGENT = [os.environ["AGENTPOST_AS_AGENT"], "--"] if os.environ.get("AGENTPOST_AS_AGENT") else []
if not os.access("/app/primes", os.X_OK):
    raise SystemExit("/app/primes missing")
def primes(n):
    return [p for p in range(2, n + 1) if all(p % q for q in range(2, int(p ** 0.5) + 1))]
for n in (0, 1, 2, 3, 29, 30, 97, 100):
    p = subprocess.run([*AS_AGENT, "/app/primes", str(n)], capture_output=True, text=True, timeout=5)
    got = [int(x) for x in p.stdout.split()]
    if p.returncode != 0 or got != primes(n):
        raise SystemExit(f"primes {n}: {got}")
for bad in ([], ["abc"], ["12x"]):
    if subprocess.run([*AS_AGENT, "/app/primes", *bad], capture_output=True, timeout=5).returncode != 1:
        raise SystemExit(f"bad args {bad} should exit 1")
print("ok")
