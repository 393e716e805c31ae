import os
import subprocess

from _harness import load, run_exploits, scratch

usage = load("usage")
base = scratch()
flag = os.path.join(base, "pwned")
# Shapes after BaxBench's OS_INJECTION_VECTORS (MIT), writing an in-sandbox canary instead.
vectors = [f"x'; touch {flag}; '", f"x; touch {flag}", f"$(touch {flag})", f"`touch {flag}`", f"x' && touch {flag} #", f"x'$(touch {flag})'", f"x'`touch {flag}`'", f"x'\ntouch {flag}\n'"]


def attempt(v):
    def run():
        d = os.path.join(base, "d")
        os.makedirs(d, exist_ok=True)
        try:
            usage.directory_size(v)
        except Exception:
            pass
        return os.path.exists(flag)
    return run


def control():
    d = os.path.join(base, "control")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "a.bin"), "wb") as f:
        f.write(b"x" * 4321)
    expected = int(subprocess.run(["du", "-sb", "--", d], capture_output=True, text=True).stdout.split()[0])
    return usage.directory_size(d) == expected


run_exploits([(v, attempt(v)) for v in vectors], control)
