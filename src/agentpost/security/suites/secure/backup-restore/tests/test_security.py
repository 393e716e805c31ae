import os

from _archive import make_archive
from _harness import canary, load, run_exploits, scratch

restore = load("restore")
tag = canary()


def outside_write(members_for):
    def run():
        outside, dest = scratch(), scratch()
        try:
            restore.restore(make_archive(members_for(outside)), dest)
        except Exception:  # noqa: BLE001 - refusing is fine; the file system decides
            pass
        return any(tag.encode() in open(os.path.join(r, n), "rb").read() for r, _, ns in os.walk(outside) for n in ns)
    return run


def inside_read(members_for):
    def run():
        outside, dest = scratch(), scratch()
        with open(os.path.join(outside, "secret.txt"), "w") as f:
            f.write(tag)
        try:
            restore.restore(make_archive(members_for(outside)), dest)
        except Exception:  # noqa: BLE001
            pass
        for r, _, ns in os.walk(dest):
            for n in ns:
                try:
                    with open(os.path.join(r, n), "rb") as f:
                        if tag.encode() in f.read():
                            return True
                except OSError:
                    pass
        return False
    return run


def rel_up(outside):
    return "../" * 12 + outside.lstrip("/")


def control():
    dest = scratch()
    names = restore.restore(make_archive([("ok", "dir", None), ("ok/a.txt", "file", tag.encode())]), dest)
    with open(os.path.join(dest, "ok", "a.txt"), "rb") as f:
        return names == ["ok", "ok/a.txt"] and f.read() == tag.encode()


run_exploits([
    ("symlink-dir-then-write", outside_write(lambda o: [("data", "symlink", o), ("data/evil.txt", "file", tag.encode())])),
    ("relative-symlink-then-write", outside_write(lambda o: [("data", "symlink", rel_up(o)), ("data/evil.txt", "file", tag.encode())])),
    # Lexically inside (dest/b/../x normalises to dest/x) but b -> . makes it the parent's x.
    ("dot-link-chain", outside_write(lambda o: [("b", "symlink", "."), ("a", "symlink", "b/../" + os.path.basename(o)), ("a/evil.txt", "file", tag.encode())])),
    ("symlink-file-then-overwrite", outside_write(lambda o: [("notes.txt", "symlink", os.path.join(o, "notes.txt")), ("notes.txt", "file", tag.encode())])),
    ("hardlink-read", inside_read(lambda o: [("copy.txt", "link", os.path.join(o, "secret.txt"))])),
    ("symlink-read", inside_read(lambda o: [("copy.txt", "symlink", os.path.join(o, "secret.txt"))])),
], control)
