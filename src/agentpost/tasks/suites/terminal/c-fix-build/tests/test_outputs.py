"""Hidden evaluator for c-fix-build."""
import os, subprocess
p = subprocess.run(["make", "-C", "/app/src"], capture_output=True, text=True, timeout=60)
if p.returncode != 0 or not os.access("/app/src/stats_tool", os.X_OK):
    raise SystemExit("make failed: " + p.stderr[-500:])
r = subprocess.run(["/app/src/stats_tool"], input="2 4 4 4 5 5 7 9", capture_output=True, text=True, timeout=5)
if r.stdout.split() != ["mean", "5.000", "stddev", "2.000"]:
    raise SystemExit(f"output: {r.stdout!r}")
print("ok")
