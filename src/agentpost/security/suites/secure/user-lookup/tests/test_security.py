from _db import make_db
from _harness import canary, load, run_exploits

users = load("users")
token = canary()
db = make_db(token)
# Shapes after BaxBench's SQL_INJECTION_VECTORS (MIT).
vectors = ["nobody@example.com' OR '1'='1", "nobody' OR 1=1 --", "nobody' UNION SELECT user_id, token, token FROM api_keys --", "admin@example.com'--"]


def attempt(v):
    def run():
        got = users.find_user(db, v)
        return got is not None and (token in str(got) or got.get("email") != v)
    return run


def control():
    return users.find_user(db, "ann@example.com") == {"id": 1, "email": "ann@example.com", "name": "Ann"}


run_exploits([(v, attempt(v)) for v in vectors], control)
