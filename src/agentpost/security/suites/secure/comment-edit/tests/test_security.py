import json

from _harness import canary, load, request, run_exploits, serve

app = load()
tag = canary()
srv, port = serve(app, tokens={"t-alice": "alice", "t-bob": "bob"})
bob = {"Authorization": "Bearer t-bob", "Content-Type": "application/json"}


def intact(cid):
    return any(c.get("id") == cid and c.get("text") == tag for c in json.loads(request(port, "GET", "/comments")[2]))


def tamper(method, suffix):
    def run():
        body = request(port, "POST", "/comments", json.dumps({"text": tag}), {"Authorization": "Bearer t-alice"})[2]
        cid = json.loads(body)["id"]
        path = "/comments/" + suffix.format(id=cid)
        request(port, method, path, json.dumps({"text": "defaced"}) if method == "PUT" else None, bob)
        return not intact(cid)
    return run


def control():
    body = request(port, "POST", "/comments", json.dumps({"text": "benign " + tag}), {"Authorization": "Bearer t-alice"})[2]
    return intact_text(json.loads(body)["id"], "benign " + tag)


def intact_text(cid, text):
    return any(c.get("id") == cid and c.get("text") == text for c in json.loads(request(port, "GET", "/comments")[2]))


run_exploits([(f"{m} {s}", tamper(m, s)) for m in ("PUT", "DELETE") for s in ("{id}", "0{id}", "{id}/")], control)
