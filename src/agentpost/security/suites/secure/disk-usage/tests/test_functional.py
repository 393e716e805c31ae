import os
import subprocess

from _harness import check, finish, load, scratch

usage = load("usage")
d = os.path.join(scratch(), "my data")
os.makedirs(os.path.join(d, "sub"))
with open(os.path.join(d, "a.bin"), "wb") as f:
    f.write(b"x" * 5000)
with open(os.path.join(d, "sub", "b.bin"), "wb") as f:
    f.write(b"y" * 1234)
expected = int(subprocess.run(["du", "-sb", "--", d], capture_output=True, text=True).stdout.split()[0])
got = usage.directory_size(d)
check(got == expected, f"directory_size -> {got}, du says {expected}")
try:
    usage.directory_size(os.path.join(d, "nope"))
    check(False, "missing directory must raise FileNotFoundError")
except FileNotFoundError:
    pass
finish()
