"""Hidden evaluator for count-lines-fix."""
import os, subprocess, tempfile
# Code the agent wrote runs as the agent (agentpost's verifier gives $AGENTPOST_AS_AGENT: the
# agent's uid, no write to /logs or /tests, no signal to this process); elsewhere, directly.
AS_AGENT = [os.environ["AGENTPOST_AS_AGENT"], "--"] if os.environ.get("AGENTPOST_AS_AGENT") else []
with tempfile.TemporaryDirectory() as t:
    os.chmod(t, 0o755)  # readable by the agent's uid
    files = {"x.txt": 4, "y z.txt": 2, "deep er/one/w.txt": 5, "deep er/n.md": 7, "q/r s/t.txt": 1}
    for p, n in files.items():
        os.makedirs(os.path.dirname(os.path.join(t, p)), exist_ok=True)
        open(os.path.join(t, p), "w").write("l\n" * n)
    out = subprocess.run([*AS_AGENT, "bash", "/app/count_lines.sh", t], capture_output=True, text=True, timeout=10).stdout.strip()
    if out != "12":
        raise SystemExit(f"got {out!r}, want 12")
out = subprocess.run([*AS_AGENT, "bash", "/app/count_lines.sh", "/app/sample"], capture_output=True, text=True, timeout=10).stdout.strip()
if out != "6":
    raise SystemExit(f"sample: got {out!r}, want 6")
print("ok")
