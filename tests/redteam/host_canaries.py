"""Canary files outside every dir a run may touch: proof that nothing on the host was created,
changed or read by an attack (red-team tests of issue 26).

``HostCanaries(root)`` plants a few files and a subdir with old timestamps; ``untouched()``
compares everything below ``root`` with that first state: names (nothing created or removed),
content, mode, owner, link count, mtime and ctime (nothing changed, re-linked or re-owned), and
each file's atime (nothing read: the files are dated days back, so a read under ``relatime``
moves the atime). Contents are hashed with ``O_NOATIME``, so checking does not count as reading.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from pathlib import Path

DAYS = 86400


class HostCanaries:
    def __init__(self, root: Path):
        self.root = root
        (root / "dir").mkdir(parents=True)
        for rel in ("canary.txt", "dir/inner.txt", "passwd"):
            p = root / rel
            p.write_text(f"canary {secrets.token_hex(8)}\n")
            os.chmod(p, 0o600)
        old = time.time() - 3 * DAYS
        for p in root.rglob("*"):
            os.utime(p, (old, old - DAYS), follow_symlinks=False)
        self.before = self.state()

    def state(self) -> dict[str, tuple]:
        out = {}
        for p in sorted(self.root.rglob("*")):
            st = p.lstat()
            rel = str(p.relative_to(self.root))
            if p.is_file() and not p.is_symlink():
                fd = os.open(p, os.O_RDONLY | os.O_NOATIME)
                with os.fdopen(fd, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                out[rel] = (st.st_mode, st.st_uid, st.st_gid, st.st_nlink, st.st_mtime_ns,
                            st.st_ctime_ns, st.st_atime_ns, digest)  # fmt: skip
            else:  # a dir's atime moves when we list it: left out
                out[rel] = (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns)
        return out

    def changes(self) -> list[str]:
        now = self.state()
        return sorted(
            k for k in self.before.keys() | now.keys() if self.before.get(k) != now.get(k)
        )

    def untouched(self) -> bool:
        return not self.changes()
