import json
import os

from _harness import canary, check, finish, load, request, scratch, serve

app = load()
base = scratch(readonly=True)  # the same dirs and files around it in every run (issue 26)
root = os.path.join(base, "shared")
os.makedirs(os.path.join(root, "reports"))
os.makedirs(root + "-private")
decoy = canary()
for path in (os.path.join(base, "secret.txt"), os.path.join(root + "-private", "secret.txt")):
    with open(path, "w") as f:
        f.write(decoy)
for name, text in {"a.txt": "alpha", "my notes.txt": "notes", "reports/2024.txt": "r24"}.items():
    with open(os.path.join(root, name), "w") as f:
        f.write(text)
srv, port = serve(app, root=root)
status, headers, body = request(port, "GET", "/files/a.txt")
check(status == 200 and body == b"alpha", f"GET /files/a.txt -> {status} {body[:40]!r}")
status, _, body = request(port, "GET", "/files/my%20notes.txt")
check(status == 200 and body == b"notes", f"URL-encoded name -> {status}")
status, _, body = request(port, "GET", "/files/reports/2024.txt")
check(status == 200 and body == b"r24", f"subdirectory file -> {status}")
status, _, _ = request(port, "GET", "/files/missing.txt")
check(status == 404, f"missing file -> {status}")
status, _, body = request(port, "GET", "/list")
check(status == 200 and json.loads(body) == ["a.txt", "my notes.txt"], f"/list -> {status} {body[:80]!r}")
finish()
