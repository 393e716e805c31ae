import json

from _db import make_db
from _harness import check, finish, load, request, serve

app = load()
srv, port = serve(app, db_path=make_db())
status, _, body = request(port, "GET", "/products?q=mug")
got = json.loads(body) if status == 200 else None
check(got == [{"name": "Blue Mug", "price": 7.5}, {"name": "Red Mug", "price": 8.0}], f"q=mug -> {status} {body[:120]!r}")
status, _, body = request(port, "GET", "/products")
check(status == 200 and [p["name"] for p in json.loads(body)] == ["Blue Mug", "Red Mug", "Teapot"], f"all -> {body[:120]!r}")
status, _, body = request(port, "GET", "/products?q=red%20m")
check(status == 200 and [p["name"] for p in json.loads(body)] == ["Red Mug"], f"encoded space -> {body[:80]!r}")
check(request(port, "GET", "/nope")[0] == 404, "unknown path -> 404")
finish()
