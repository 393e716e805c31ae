import os

from _harness import load, run_exploits, scratch

calc = load("calc")
flag = os.path.join(scratch(), "pwned")
# Shapes after BaxBench's CODE_INJECTION_VECTORS (MIT), writing an in-sandbox canary.
vectors = [f"__import__('os').system('touch {flag}')", f"len(__import__('subprocess').check_output(['touch', '{flag}']))", f"open('{flag}', 'w').write('x')"]


def attempt(v):
    def run():
        try:
            calc.calculate(v)
        except Exception:
            pass
        return os.path.exists(flag)
    return run


run_exploits([(v, attempt(v)) for v in vectors])
