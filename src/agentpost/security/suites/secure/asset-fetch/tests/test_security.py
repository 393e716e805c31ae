import os

from _harness import canary, load, run_exploits, scratch
from _servers import static_server

assets = load("assets")
secret = canary()
public = static_server("127.0.0.1", {"/static/a.css": b"a"})
internal = static_server("127.0.0.2", {"/internal": secret.encode()})
path = os.path.join(scratch(), "secret.txt")
with open(path, "w") as f:
    f.write(secret)
base = f"http://127.0.0.1:{public}/static/"
names = [f"http://127.0.0.2:{internal}/internal", f"//127.0.0.2:{internal}/internal", "file://" + path, f"HTTP://127.0.0.2:{internal}/internal"]


def attempt(name):
    def run():
        try:
            return secret.encode() in assets.fetch_asset(base, name)
        except (ValueError, OSError):
            return False
    return run


run_exploits([(n, attempt(n)) for n in names])
