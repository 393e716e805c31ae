import json

from _harness import canary, load, request, run_exploits, serve
from _people import member

app = load()
secret = canary()
alice = member("alice", "Alice", "hr", secret)
PRIVATE = ("email", "phone", "password_hash", "reset_token")  # each holds the canary
srv, port = serve(app, members={"alice": alice, "bob": member("bob", "Bob", "dev")}, tokens={"t-bob": "bob"})


def leaks(path):
    def run():
        body = request(port, "GET", path, headers={"Authorization": "Bearer t-bob"})[2]
        return any(alice[k].encode() in body for k in PRIVATE)
    return run


def control():
    status, _, body = request(port, "GET", "/members/bob", headers={"Authorization": "Bearer t-bob"})
    doc = json.loads(body) if status == 200 else {}
    return all(doc.get(k) == v for k, v in (("name", "bob"), ("display_name", "Bob"), ("team", "dev")))


run_exploits([(p, leaks(p)) for p in ("/members", "/members/alice", "/members/alice?fields=all", "/members/%61lice", "/me")], control)
