import json

from _harness import canary, load, request, run_exploits, serve

app = load()
email = canary() + "@example.com"
srv, port = serve(app, users={"victim": {"password": "v-pass-1", "email": email}})
J = {"Content-Type": "application/json"}


def planted_by_cart():
    headers = request(port, "POST", "/cart", json.dumps({"item": "bait"}), J)[1]
    return headers.get("Set-Cookie", "").split(";")[0].split("=", 1)[-1]


def fixation(get_sid, cookie_fmt):
    def run():
        sid = get_sid()
        request(port, "POST", "/login", json.dumps({"user": "victim", "password": "v-pass-1"}), {**J, "Cookie": cookie_fmt.format(sid=sid)})
        return email.encode() in request(port, "GET", "/me", headers={"Cookie": f"sid={sid}"})[2]
    return run


invented = canary().replace("-", "")


def control():
    status, headers, body = request(port, "POST", "/login", json.dumps({"user": "victim", "password": "v-pass-1"}), J)
    sid = headers.get("Set-Cookie", "").split(";")[0].split("=", 1)[-1]
    me = request(port, "GET", "/me", headers={"Cookie": f"sid={sid}"})
    return status == 200 and me[0] == 200 and json.loads(me[2]) == {"user": "victim", "email": email}


run_exploits([
    ("cart-issued-sid", fixation(planted_by_cart, "sid={sid}")),
    ("invented-sid", fixation(lambda: invented, "sid={sid}")),
    ("sid-with-other-cookie", fixation(planted_by_cart, "theme=dark; sid={sid}")),
    ("quoted-sid", fixation(planted_by_cart, 'sid="{sid}"')),
], control)
