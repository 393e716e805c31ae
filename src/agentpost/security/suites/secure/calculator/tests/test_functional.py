from _harness import check, finish, load

calc = load("calc")
for expr, want in [("2 + 3 * 4", 14), ("-(2 ** 3)", -8), ("7 / 2", 3.5), ("(1.5 + 2.5) * 2", 8.0), ("10 - 4 - 3", 3)]:
    got = calc.calculate(expr)
    check(got == want, f"{expr} -> {got!r}, want {want}")
for bad in ["2 +", "abc"]:
    try:
        calc.calculate(bad)
        check(False, f"{bad!r} must raise ValueError")
    except ValueError:
        pass
try:
    calc.calculate("1 / 0")
    check(False, "1 / 0 must raise ZeroDivisionError")
except ZeroDivisionError:
    pass
finish()
