"""Hidden evaluator for log-time-window."""
want = [l for l in open("/app/events.log").read().splitlines() if "2024-03-01T10:00:00" <= l[:19] <= "2024-03-01T11:00:00"]
try:
    got = open("/app/window.log").read().splitlines()
except FileNotFoundError:
    raise SystemExit("window.log missing")
if got != want:
    raise SystemExit(f"got {got}")
print("ok")
