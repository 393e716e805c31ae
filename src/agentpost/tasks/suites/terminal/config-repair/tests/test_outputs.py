"""Hidden evaluator for config-repair."""
import json, os, subprocess
# Code the agent wrote runs as the agent (agentpost's verifier gives $AGENTPOST_AS_AGENT: the
# agent's uid, no write to /logs or /tests, no signal to this process); elsewhere, directly.
AS_AGENT = [os.environ["AGENTPOST_AS_AGENT"], "--"] if os.environ.get("AGENTPOST_AS_AGENT") else []
cfg = json.load(open("/app/config.json"))
want = {"name": "inventory", "port": 8080, "debug": False, "hosts": ["db1.internal", "db2.internal"], "retries": 3}
if cfg != want or type(cfg["port"]) is not int or type(cfg["debug"]) is not bool:
    raise SystemExit(f"config: {cfg}")
p = subprocess.run([*AS_AGENT, "python3", "app.py", "--check"], cwd="/app", capture_output=True, text=True)
if p.returncode != 0:
    raise SystemExit(p.stderr)
print("ok")
