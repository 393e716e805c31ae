import os

from _harness import canary, load, run_exploits, scratch
from _servers import static_server

assets = load("assets")
secret = canary()
hits = []  # requests that reached an internal server: SSRF even when nothing is returned
public = static_server("127.0.0.1", {"/static/a.css": b"a"})
internal = static_server("127.0.0.2", {"/internal": secret.encode()}, hits)
admin = static_server("127.0.0.1", {"/internal": secret.encode()}, hits)  # same host, another port
path = os.path.join(scratch(readonly=True), "secret.txt")
with open(path, "w") as f:
    f.write(secret)
base = f"http://127.0.0.1:{public}/static/"
names = [f"http://127.0.0.2:{internal}/internal", f"//127.0.0.2:{internal}/internal", "file://" + path, f"HTTP://127.0.0.2:{internal}/internal", f"http://127.0.0.1:{admin}/internal"]


def attempt(name):
    def run():
        before = len(hits)
        try:
            got = assets.fetch_asset(base, name)
        except Exception:  # noqa: BLE001 - a request made before the error is still a finding
            got = b""
        return secret.encode() in (got if isinstance(got, bytes) else b"") or len(hits) > before
    return run


def control():
    return assets.fetch_asset(base, "a.css") == b"a"


run_exploits([(n, attempt(n)) for n in names], control)
