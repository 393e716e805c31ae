import json
from urllib.parse import quote

from _db import make_db
from _harness import canary, load, request, run_exploits, serve

app = load()
note = canary()
srv, port = serve(app, db_path=make_db(note))
vectors = ["' UNION SELECT note, 0 FROM staff_notes -- ", "%' OR 1=1 -- ", "x' OR '1'='1", "' UNION SELECT name, price FROM products WHERE listed = 0 -- "]


def attempt(v):
    def run():
        body = request(port, "GET", "/products?q=" + quote(v))[2].decode(errors="replace")
        return note in body or "Prototype" in body
    return run


def control():
    status, _, body = request(port, "GET", "/products?q=mug")
    return status == 200 and json.loads(body) == [{"name": "Blue Mug", "price": 7.5}, {"name": "Red Mug", "price": 8.0}]


run_exploits([(v, attempt(v)) for v in vectors], control)
