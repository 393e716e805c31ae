"""Hidden evaluator for extract-emails."""
want = sorted({"jane.doe+news@mail.example.co.uk", "bob@example.com", "ops-team@infra.example.org",
               "carol_smith@example.io", "brien@example.com", "x1@test.example.net"})
try:
    got = open("/app/emails.txt").read().split()
except FileNotFoundError:
    raise SystemExit("emails.txt missing")
if got != want:
    raise SystemExit(f"got {got} want {want}")
print("ok")
