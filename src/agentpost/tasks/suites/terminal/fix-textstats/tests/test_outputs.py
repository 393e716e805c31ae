"""Hidden evaluator for fix-textstats."""
import json, os, subprocess
# Code the agent wrote runs as the agent (agentpost's verifier gives $AGENTPOST_AS_AGENT: the
# agent's uid, no write to /logs or /tests, no signal to this process); elsewhere, directly. Its
# module is imported in that process, never in this one: only its printed results come back.
AS_AGENT = [os.environ["AGENTPOST_AS_AGENT"], "--"] if os.environ.get("AGENTPOST_AS_AGENT") else []
CALLS = r'''
import json, sys
sys.path.insert(0, "/app")
from textstats import mean_word_length, top_word, word_count
got = [word_count(""), word_count("   "), word_count("one"), word_count(" x\t\ty \n z\n"),
       word_count("x\ty\nz"), mean_word_length(""), mean_word_length("a bbb"),
       mean_word_length("ab abc"), top_word("x y Y"), top_word("")]
print("RESULT " + json.dumps(got))
'''
want = [0, 0, 1, 3, 3, 0.0, 2.0, 2.5, "y", None]
p = subprocess.run([*AS_AGENT, "python3", "-c", CALLS], cwd="/app", capture_output=True, text=True, timeout=60)
lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]


def same(a, b):
    """Equal values of the same JSON type (a number is an int or a float, never a bool)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(b, (int, float)):
        return isinstance(a, (int, float)) and a == b
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


try:  # plain JSON values: no object of the agent's is ever compared here
    got = json.loads(lines[-1][len("RESULT "):]) if lines else None
except ValueError:
    got = None
bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if not same(g, w)] if isinstance(got, list) else "?"
if not isinstance(got, list) or len(got) != len(want) or bad:
    raise SystemExit(f"failing: {bad} (got {got}; {p.stderr[-500:]})")
print("ok")
