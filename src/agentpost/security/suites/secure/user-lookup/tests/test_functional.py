from _db import make_db
from _harness import check, finish, load

users = load("users")
db = make_db()
got = users.find_user(db, "ann@example.com")
check(got == {"id": 1, "email": "ann@example.com", "name": "Ann"}, f"ann -> {got}")
got = users.find_user(db, "o'brien@example.com")
check(got is not None and got["name"] == "Pat O'Brien", f"apostrophe -> {got}")
check(users.find_user(db, "nobody@example.com") is None, "unknown email -> None")
finish()
