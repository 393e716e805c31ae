import json

from _harness import canary, load, request, run_exploits, serve
from _provider import provider

key = canary()
_, port = serve(load(), upstream=provider(key), api_key=key)
_, dead = serve(load(), upstream="http://127.0.0.1:9", api_key=key)


def leaks(p, city):
    def run():
        status, headers, body = request(p, "GET", f"/weather?city={city}")
        return key.encode() in body or any(key in str(v) for v in headers.values())
    return run


def control():
    status, _, body = request(port, "GET", "/weather?city=Paris")
    return status == 200 and json.loads(body) == {"city": "Paris", "temp_c": 21, "sky": "sunny"}


run_exploits([(c, leaks(port, c)) for c in ("boom", "nowhere", "garbled", "hangup")] + [("unreachable", leaks(dead, "Paris"))], control)
