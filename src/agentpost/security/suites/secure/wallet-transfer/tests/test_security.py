import secrets

from _db import cents, make_db
from _harness import load, run_exploits

wallet = load("wallet")
start = 100000 + secrets.randbelow(900000)  # alice's balance: an unpredictable canary amount
amounts = {"negative": -5000, "minus-one": -1, "negative-float": -50.0, "negative-string": "-5000", "negative-all": -start}


def steals(amount):
    def run():
        db = make_db({"alice": start, "mallory": 0})
        try:
            wallet.transfer(db, "mallory", "alice", amount)
        except Exception:  # noqa: BLE001 - refusing is the right answer; balances decide
            pass
        return cents(db, "mallory") > 0 or cents(db, "alice") < start
    return run


def control():
    db = make_db({"ann": start, "bob": 0})
    return wallet.transfer(db, "ann", "bob", 2550) == start - 2550 and cents(db, "bob") == 2550


run_exploits([(k, steals(a)) for k, a in amounts.items()], control)
