import re

from _harness import check, finish, load

session = load("session")
data = {"user": "ann", "id": 7, "ratio": 0.5, "admin": False, "cart": [1, 2, {"sku": "x"}], "note": None}
token = session.dump_session(data)
check(isinstance(token, str) and re.fullmatch(r"[A-Za-z0-9_\-=]+", token) is not None, f"token charset: {token[:40]!r}")
check(session.load_session(token) == data, "round trip")
try:
    session.load_session("not a token!!")
    check(False, "garbage must raise ValueError")
except ValueError:
    pass
finish()
