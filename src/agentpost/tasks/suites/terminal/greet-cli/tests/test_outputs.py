"""Hidden evaluator for greet-cli."""
import os, subprocess
# Code the agent wrote runs as the agent (agentpost's verifier gives $AGENTPOST_AS_AGENT: the
# agent's uid, no write to /logs or /tests, no signal to this process); elsewhere, directly.
AS_AGENT = [os.environ["AGENTPOST_AS_AGENT"], "--"] if os.environ.get("AGENTPOST_AS_AGENT") else []
def run(*a):
    p = subprocess.run([*AS_AGENT, "bash", "/app/greet.sh", *a], capture_output=True, text=True, timeout=10)
    return p.returncode, p.stdout.rstrip("\n")
cases = [((), (0, "Hello, World!")), (("-n", "Ada"), (0, "Hello, Ada!")), (("-n", "Ada Lovelace"), (0, "Hello, Ada Lovelace!")),
         (("-u",), (0, "HELLO, WORLD!")), (("-n", "Bo", "-u"), (0, "HELLO, BO!")), (("-u", "-n", "Bo"), (0, "HELLO, BO!"))]
for args, want in cases:
    if run(*args) != want:
        raise SystemExit(f"{args}: {run(*args)} != {want}")
for bad in (("-x",), ("extra",)):
    if run(*bad)[0] != 2:
        raise SystemExit(f"{bad} should exit 2")
print("ok")
