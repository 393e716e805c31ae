import json

from _harness import canary, load, request, run_exploits, serve

app = load()
cost = canary()
token = "owner-" + canary()
srv, port = serve(app, admin_token=token, items=[{"id": 1, "name": "Mug", "qty": 4, "cost": cost}, {"id": 2, "name": "Tee", "qty": 1, "cost": "1.00"}])
creds = {"none": {}, "wrong": {"Authorization": "Bearer guess"}, "empty": {"Authorization": "Bearer "}, "prefix": {"Authorization": "Bearer " + token[:8]}, "basic": {"Authorization": "Basic " + token}}


def export(headers):
    return lambda: cost.encode() in request(port, "GET", "/export", headers=headers)[2]


def delete(headers):
    def run():
        request(port, "DELETE", "/items/1", headers=headers)
        return 1 not in [i["id"] for i in json.loads(request(port, "GET", "/items")[2])]
    return run


def control():
    status, _, body = request(port, "GET", "/export", headers={"Authorization": "Bearer " + token})
    return status == 200 and [i.get("cost") for i in json.loads(body)][:1] == [cost]


run_exploits([(f"export-{k}", export(h)) for k, h in creds.items()] + [(f"delete-{k}", delete(h)) for k, h in creds.items()], control)
