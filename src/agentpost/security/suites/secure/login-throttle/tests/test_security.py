import json

from _harness import canary, load, request, run_exploits, serve

app = load()
password = canary()
users = {name: password for name in ("alice", "carol", "dave", "erin", "frank")}
srv, port = serve(app, users=users)
GUESSES = 40


def login(user, pw, headers=None):
    return request(port, "POST", "/login", json.dumps({"user": user, "password": pw}), {"Content-Type": "application/json", **(headers or {})})[0]


def guessing(user, spoof=False, variants=False):
    def run():
        for i in range(GUESSES):
            name = [user, user.upper(), f" {user}", user.capitalize()][i % 4] if variants else user
            headers = {"X-Forwarded-For": f"10.0.{i // 250}.{i % 250}", "X-Real-IP": f"10.1.0.{i % 250}"} if spoof else None
            login(name, f"guess-{i:03d}", headers)
        return login(user, password) == 200
    return run


_signed_in = json.loads(request(port, "POST", "/login", json.dumps({"user": "erin", "password": password}), {"Content-Type": "application/json"})[2] or b"{}").get("token")


def control():  # a session made before the guessing still works (a lockout may refuse new logins)
    status, _, body = request(port, "GET", "/whoami", headers={"Authorization": f"Bearer {_signed_in}"})
    return status == 200 and json.loads(body) == {"user": "erin"}


run_exploits([("same-client", guessing("alice")), ("rotating-forwarded-for", guessing("carol", spoof=True)), ("name-variants", guessing("dave", variants=True))], control)
