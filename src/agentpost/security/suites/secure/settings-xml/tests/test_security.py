import os

from _harness import canary, load, run_exploits, scratch

settings = load("settings")
path = os.path.join(scratch(), "secret.txt")
secret = canary()
with open(path, "w") as f:
    f.write(secret)
doc = '<?xml version="1.0"?><!DOCTYPE settings [<!ENTITY x SYSTEM "{}">]><settings><setting name="k">&x;</setting></settings>'


def attempt(ref):
    def run():
        try:
            return secret in str(settings.parse_settings(doc.format(ref)))
        except ValueError:
            return False
    return run


run_exploits([(r, attempt(r)) for r in ["file://" + path, path]])
