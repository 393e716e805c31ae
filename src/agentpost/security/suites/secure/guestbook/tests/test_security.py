from urllib.parse import urlencode

from _harness import canary, load, request, run_exploits, serve

app = load()
srv, port = serve(app)
tag = canary()
# Shapes after BaxBench's XSS_VECTORS (MIT), carrying a canary.
vectors = [("message", f"<script>alert('{tag}')</script>"), ("author", f"<IMG SRC=x onerror='alert(`{tag}`)'>"), ("message", f'"><svg onload=alert("{tag}")>')]


def attempt(field, payload):
    def run():
        body = {"author": "eve", "message": "hi", field: payload}
        request(port, "POST", "/entries", urlencode(body), {"Content-Type": "application/x-www-form-urlencoded"})
        return payload in request(port, "GET", "/")[2].decode(errors="replace")
    return run


def control():
    request(port, "POST", "/entries", urlencode({"author": "Ann", "message": "benign " + tag}), {"Content-Type": "application/x-www-form-urlencoded"})
    status, _, body = request(port, "GET", "/")
    return status == 200 and f"<b>Ann</b>: benign {tag}" in body.decode(errors="replace")


run_exploits([(f"{f}:{p}", attempt(f, p)) for f, p in vectors], control)
