import json

from _harness import canary, load, request, run_exploits, serve

app = load()
tag = canary()
bodies = {
    "role": {"role": "admin"},
    "role-with-name": {"display_name": "Mal", "role": "admin"},
    "nested-profile": {"profile": {"role": "admin"}},
    "plan": {"plan": "enterprise"},
    "impersonate": {"user": "root"},
}
# One member account per attempt, so an escalation in one attempt cannot leak into the next.
accounts = {f"t-mal-{k}": {"user": f"mal-{k}", "display_name": "Mal", "email": "mal@example.com", "role": "member", "plan": "free"} for k in bodies}
accounts["t-root"] = {"user": "root", "display_name": "Root", "email": "r@example.com", "role": "admin", "plan": "team"}
srv, port = serve(app, accounts=accounts, stats={"revenue": tag})


def escalates(name, body):
    def run():
        h = {"Authorization": f"Bearer t-mal-{name}", "Content-Type": "application/json"}
        request(port, "PATCH", "/me", json.dumps(body), h)
        me = json.loads(request(port, "GET", "/me", headers=h)[2] or b"{}")
        return tag.encode() in request(port, "GET", "/admin/stats", headers=h)[2] or me.get("plan") != "free" or me.get("user") != f"mal-{name}"
    return run


def control():
    status, _, body = request(port, "GET", "/admin/stats", headers={"Authorization": "Bearer t-root"})
    return status == 200 and json.loads(body) == {"revenue": tag}


run_exploits([(k, escalates(k, b)) for k, b in bodies.items()], control)
