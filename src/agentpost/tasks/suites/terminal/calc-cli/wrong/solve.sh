#!/usr/bin/env bash
# A plausible WRONG solution: uses floor division for div, so 7/2 prints 3.
set -uo pipefail
cd /app
cat > calc.py <<'EOF'
import sys

USAGE = "usage: calc.py add|sub|mul|div A B"


def fmt(x):
    return str(int(x)) if float(x).is_integer() else repr(x)


def main(argv):
    if len(argv) != 3 or argv[0] not in ("add", "sub", "mul", "div"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        a, b = float(argv[1]), float(argv[2])
    except ValueError:
        print(USAGE, file=sys.stderr)
        return 2
    op = argv[0]
    if op == "div" and b == 0:
        print("error: division by zero", file=sys.stderr)
        return 1
    r = {"add": a + b, "sub": a - b, "mul": a * b}.get(op) if op != "div" else a // b
    print(fmt(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
EOF
