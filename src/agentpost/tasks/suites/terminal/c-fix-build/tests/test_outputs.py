"""Hidden evaluator for c-fix-build."""
import os, subprocess
# Code the agent wrote runs as the agent (agentpost's verifier gives $AGENTPOST_AS_AGENT: the
# agent's uid, no write to /logs or /tests, no signal to this process); elsewhere, directly.
AS_AGENT = [os.environ["AGENTPOST_AS_AGENT"], "--"] if os.environ.get("AGENTPOST_AS_AGENT") else []
p = subprocess.run([*AS_AGENT, "make", "-C", "/app/src"], capture_output=True, text=True, timeout=60)
if p.returncode != 0 or not os.access("/app/src/stats_tool", os.X_OK):
    raise SystemExit("make failed: " + p.stderr[-500:])
# the check's input, and inputs the agent never saw (a tool that prints the one answer it saw fails)
cases = {"2 4 4 4 5 5 7 9": "5.000 2.000", "1 2 3 4": "2.500 1.118", "10": "10.000 0.000",
         "-1.5 3.25 0 8": "2.438 3.642"}
for given, want in cases.items():
    r = subprocess.run([*AS_AGENT, "/app/src/stats_tool"], input=given, capture_output=True, text=True, timeout=5)
    mean, std = want.split()
    if r.stdout.split() != ["mean", mean, "stddev", std]:
        raise SystemExit(f"{given!r}: output {r.stdout!r}")
print("ok")
