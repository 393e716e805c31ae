"""Inventory service launcher: `python3 app.py --check` validates config.json."""
import json
import sys


def validate(cfg):
    errors = []
    if not isinstance(cfg.get("name"), str):
        errors.append("name must be a string")
    port = cfg.get("port")
    if not (isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535):
        errors.append("port must be an integer in 1..65535")
    if not isinstance(cfg.get("debug"), bool):
        errors.append("debug must be true or false")
    hosts = cfg.get("hosts")
    if not (isinstance(hosts, list) and hosts and all(isinstance(h, str) for h in hosts)):
        errors.append("hosts must be a non-empty list of strings")
    return errors


if __name__ == "__main__":
    try:
        cfg = json.load(open("config.json"))
    except ValueError as e:
        sys.exit(f"config.json: invalid JSON: {e}")
    errs = validate(cfg)
    for e in errs:
        print("config error:", e, file=sys.stderr)
    if errs:
        sys.exit(1)
    print("config ok")
