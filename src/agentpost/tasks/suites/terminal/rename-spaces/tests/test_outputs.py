"""Hidden evaluator for rename-spaces."""
import os, subprocess, tempfile
# Code the agent wrote runs as the agent (agentpost's verifier gives $AGENTPOST_AS_AGENT: the
# agent's uid, no write to /logs or /tests, no signal to this process); elsewhere, directly.
# --rw: the script may rename files in the test's temp dir (it becomes the agent's).
AS_AGENT = [os.environ["AGENTPOST_AS_AGENT"]] if os.environ.get("AGENTPOST_AS_AGENT") else []
want_inbox = {"quarterly_report.txt", "notes.md", "photo__2024_01.jpg", "sub dir"}
if set(os.listdir("/app/inbox")) != want_inbox:
    raise SystemExit(f"inbox: {sorted(os.listdir('/app/inbox'))}")
if not os.path.exists("/app/inbox/sub dir/keep me.txt"):
    raise SystemExit("file in subdirectory was renamed")
with tempfile.TemporaryDirectory() as t:
    files = {"a b c.txt": "1", " lead.txt": "2", "plain": "3", "-dash x": "4"}
    for n, c in files.items():
        open(os.path.join(t, n), "w").write(c)
    os.mkdir(os.path.join(t, "d d"))
    p = subprocess.run([*AS_AGENT, *(["--rw", t, "--"] if AS_AGENT else []), "bash", "/app/fix_names.sh", t], capture_output=True, text=True, timeout=10)
    got = {n: (open(os.path.join(t, n)).read() if os.path.isfile(os.path.join(t, n)) else "dir") for n in os.listdir(t)}
    want = {"a_b_c.txt": "1", "_lead.txt": "2", "plain": "3", "-dash_x": "4", "d d": "dir"}
    if got != want:
        raise SystemExit(f"got {got} want {want} ({p.stderr})")
print("ok")
