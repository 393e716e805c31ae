import os

from _harness import load, run_exploits, scratch

calc = load("calc")
flag = os.path.join(scratch(), "pwned")
# Shapes after BaxBench's CODE_INJECTION_VECTORS (MIT), writing an in-sandbox canary.
vectors = [f"__import__('os').system('touch {flag}')", f"len(__import__('subprocess').check_output(['touch', '{flag}']))", f"open('{flag}', 'w').write('x')",
    # eval(expr, {"__builtins__": {}}) is no sandbox: reach os.system through object's subclasses
    f"[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__['system']('touch {flag}')",
    # identifiers are NFKC-normalised, so a blacklist of "__import__" / "import" substrings misses this
    "_\uff3f\U0001d5c2mport\uff3f\uff3f('os').system('touch %s')" % flag,
]


def attempt(v):
    def run():
        try:
            calc.calculate(v)
        except Exception:
            pass
        return os.path.exists(flag)
    return run


def control():
    return calc.calculate("2 + 3 * 4") == 14


run_exploits([(v, attempt(v)) for v in vectors], control)
