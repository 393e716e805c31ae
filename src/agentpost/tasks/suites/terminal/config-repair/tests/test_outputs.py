"""Hidden evaluator for config-repair."""
import json, subprocess
cfg = json.load(open("/app/config.json"))
want = {"name": "inventory", "port": 8080, "debug": False, "hosts": ["db1.internal", "db2.internal"], "retries": 3}
if cfg != want or type(cfg["port"]) is not int or type(cfg["debug"]) is not bool:
    raise SystemExit(f"config: {cfg}")
p = subprocess.run(["python3", "app.py", "--check"], cwd="/app", capture_output=True, text=True)
if p.returncode != 0:
    raise SystemExit(p.stderr)
print("ok")
