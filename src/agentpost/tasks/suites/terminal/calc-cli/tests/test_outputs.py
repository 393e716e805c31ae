"""Hidden evaluator for calc-cli."""
import os, subprocess
# Code the agent wrote runs as the agent (agentpost's verifier gives $AGENTPOST_AS_AGENT: the
# agent's uid, no write to /logs or /tests, no signal to this process); elsewhere, directly.
AS_AGENT = [os.environ["AGENTPOST_AS_AGENT"], "--"] if os.environ.get("AGENTPOST_AS_AGENT") else []
def run(*a):
    p = subprocess.run([*AS_AGENT, "python3", "/app/calc.py", *a], capture_output=True, text=True, timeout=10)
    return p.returncode, p.stdout.strip(), p.stderr.strip()
cases = [
    (("add", "2", "3"), (0, "5")), (("sub", "2", "5"), (0, "-3")), (("mul", "1.5", "4"), (0, "6")),
    (("div", "7", "2"), (0, "3.5")), (("div", "9", "3"), (0, "3")), (("add", "0.5", "0.25"), (0, "0.75")),
]
for args, (code, out) in cases:
    got = run(*args)
    if got[:2] != (code, out):
        raise SystemExit(f"{args}: got {got}, want {(code, out)}")
code, out, err = run("div", "1", "0")
if code != 1 or "error: division by zero" not in err:
    raise SystemExit(f"div by zero: {(code, out, err)}")
for bad in [("pow", "2", "3"), ("add", "2"), ("add", "x", "1")]:
    if run(*bad)[0] != 2:
        raise SystemExit(f"{bad} should exit 2")
print("ok")
