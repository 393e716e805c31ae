import json

from _harness import canary, load, request, run_exploits, serve

app = load()
srv, port = serve(app, tokens={"t-alice": "alice", "t-bob": "bob"})
secret = canary()
status, _, body = request(port, "POST", "/docs", json.dumps({"title": "salary", "body": secret}), {"Authorization": "Bearer t-alice"})
doc_id = json.loads(body)["id"]


def read_as_other_user(path):
    return lambda: secret.encode() in request(port, "GET", path, headers={"Authorization": "Bearer t-bob"})[2]


def control():
    status, _, body = request(port, "GET", f"/docs/{doc_id}", headers={"Authorization": "Bearer t-alice"})
    return status == 200 and json.loads(body).get("body") == secret


run_exploits([(p, read_as_other_user(p)) for p in [f"/docs/{doc_id}", "/docs", f"/docs/0{doc_id}", f"/docs/{doc_id}/", f"/docs/{doc_id}?full=1"]], control)
