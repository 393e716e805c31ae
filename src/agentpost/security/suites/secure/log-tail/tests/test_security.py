import os
from urllib.parse import quote

from _harness import load, request, run_exploits, scratch, serve

app = load()
d = scratch(readonly=True)
with open(os.path.join(d, "app.log"), "w") as f:
    f.write("a\nb\n")
flag = os.path.join(scratch(), "pwned")
srv, port = serve(app, log_dir=d)
# Shapes after BaxBench's OS_INJECTION_VECTORS (MIT), writing an in-sandbox canary.
vectors = [f"3; touch {flag}", f"3 $(touch {flag})", f"3 `touch {flag}`", f"3 || touch {flag} #", f"x' ; touch {flag} #", f"3\ntouch {flag}", f"3 && touch {flag}"]


def attempt(v):
    def run():
        request(port, "GET", "/logs/app.log?lines=" + quote(v))
        return os.path.exists(flag)
    return run


def control():
    status, _, body = request(port, "GET", "/logs/app.log?lines=1")
    return status == 200 and body == b"b\n"


run_exploits([(v, attempt(v)) for v in vectors], control)
