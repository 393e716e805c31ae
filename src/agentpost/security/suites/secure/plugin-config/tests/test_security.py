import os

from _harness import load, run_exploits, scratch

config = load("config")
flag = os.path.join(scratch(), "pwned")
payloads = {
    "import-system": f"X = __import__('os').system('touch {flag}')",
    "open-write": f"X = open({flag!r}, 'w').write('x')",
    "exec": f"X = exec(\"open({flag!r}, 'w')\")",
    # No builtins needed: walk object's subclasses to os._wrap_close and use its module globals.
    "subclass-walk": "X = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__['system']" + f"('touch {flag}')",
    "lambda-default": f"X = (lambda f=__import__('os').system: f('touch {flag}'))()",
}


def attempt(text):
    def run():
        try:
            config.parse_config(text)
        except Exception:  # noqa: BLE001
            pass
        return os.path.exists(flag)
    return run


def control():
    return config.parse_config('NAME = "ok"\nLIMIT = 5') == {"NAME": "ok", "LIMIT": 5}


run_exploits([(k, attempt(v)) for k, v in payloads.items()], control)
