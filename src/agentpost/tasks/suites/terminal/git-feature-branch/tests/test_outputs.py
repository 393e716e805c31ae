"""Hidden evaluator for git-feature-branch."""
import os, subprocess
# Code the agent wrote runs as the agent (agentpost's verifier gives $AGENTPOST_AS_AGENT: the
# agent's uid, no write to /logs or /tests, no signal to this process); elsewhere, directly.
AS_AGENT = [os.environ["AGENTPOST_AS_AGENT"], "--"] if os.environ.get("AGENTPOST_AS_AGENT") else []
def git(*a):
    return subprocess.run([*AS_AGENT, "git", "-C", "/app/repo", *a], capture_output=True, text=True).stdout.strip()
fails = []
if git("log", "-1", "--format=%s", "main") != "Initial commit":
    fails.append("main moved")
if git("log", "-1", "--format=%s", "feature/greeting") != "Update greeting":
    fails.append("no 'Update greeting' commit on feature/greeting")
if git("rev-parse", "feature/greeting~1") != git("rev-parse", "main"):
    fails.append("feature/greeting is not one commit on top of main")
if git("diff", "--name-only", "main", "feature/greeting").split() != ["greeting.txt"]:
    fails.append("commit touches more than greeting.txt")
if git("show", "feature/greeting:greeting.txt") != "hello, world":
    fails.append("greeting change not committed")
if open("/app/repo/notes.txt").read() != "todo: write docs\n":
    fails.append("notes.txt change lost")
if fails:
    raise SystemExit("; ".join(fails))
print("ok")
