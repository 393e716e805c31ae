"""Disk usage helper."""

import subprocess


def directory_size(path):
    out = subprocess.run(["du", "-sb", "--", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise FileNotFoundError(path)
    return int(out.stdout.split()[0])
