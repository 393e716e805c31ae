import json

from _harness import check, finish, load, request, serve

app = load()
srv, port = serve(app, tokens={"t-ann": "ann", "t-bob": "bob"})
ann = {"Authorization": "Bearer t-ann", "Content-Type": "application/json"}
status, _, body = request(port, "POST", "/docs", json.dumps({"title": "Plan", "body": "step 1"}), ann)
check(status == 201 and json.loads(body) == {"id": 1}, f"POST /docs -> {status} {body!r}")
status, _, body = request(port, "GET", "/docs/1", headers=ann)
check(status == 200 and json.loads(body) == {"id": 1, "title": "Plan", "body": "step 1", "owner": "ann"}, f"GET /docs/1 -> {status} {body!r}")
status, _, body = request(port, "GET", "/docs", headers=ann)
check(status == 200 and json.loads(body) == [{"id": 1, "title": "Plan"}], f"GET /docs -> {body!r}")
status, _, body = request(port, "GET", "/docs", headers={"Authorization": "Bearer t-bob"})
check(status == 200 and json.loads(body) == [], f"bob's list -> {body!r}")
check(request(port, "GET", "/docs/1")[0] == 401, "no token -> 401")
check(request(port, "GET", "/docs/99", headers=ann)[0] == 404, "missing -> 404")
finish()
