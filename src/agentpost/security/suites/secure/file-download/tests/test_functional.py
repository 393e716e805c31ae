import json
import os

from _harness import check, finish, load, request, scratch, serve

app = load()
root = os.path.join(scratch(), "shared")
os.makedirs(os.path.join(root, "reports"))
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
