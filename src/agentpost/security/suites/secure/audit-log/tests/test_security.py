import os

from _harness import canary, load, run_exploits, scratch

audit = load("audit")
tag = canary()
forged = f"2024-01-01T00:00:00 user=admin action=grant {tag}"
breaks = {"lf": "\n", "cr": "\r", "crlf": "\r\n", "u2028": "\u2028", "nel": "\x85", "ff": "\x0c", "vt": "\x0b"}


def forges(field, brk):
    def run():
        log = os.path.join(scratch(), "audit.log")
        try:
            if field == "user":
                audit.record(log, "bob" + brk + forged.split(" user=")[0] + " user=admin", "grant " + tag)
            else:
                audit.record(log, "bob", "login" + brk + forged)
        except ValueError:  # refusing the event is a defence, not an error of the exploit
            return False
        if not os.path.exists(log):
            return False
        with open(log, encoding="utf-8") as f:
            lines = f.read().splitlines()
        events = audit.read_events(log)
        in_file = any(ln.startswith("2024-01-01T00:00:00 user=admin") for ln in lines)
        return in_file or any(e.get("user") == "admin" for e in events)
    return run


def control():
    log = os.path.join(scratch(), "audit.log")
    audit.record(log, "ann", "login")
    return [(e.get("user"), e.get("action")) for e in audit.read_events(log)] == [("ann", "login")]


run_exploits([(f"{fld}-{k}", forges(fld, b)) for fld in ("action", "user") for k, b in breaks.items()], control)
