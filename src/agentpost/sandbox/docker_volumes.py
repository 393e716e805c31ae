"""A docker sandbox's writable directories, seen from the host: its anonymous volumes.

``docker inspect`` names each volume's host directory; reads and writes go through
``hostfs.MountTable`` (symlinks resolved inside the sandbox, never followed on the host).
Snapshots are tar files of the writable directories (owners and modes kept, ``/tmp`` and the home
left out, as in bwrap); a restore empties each volume (which Docker filled from the image) and
puts back exactly the snapshot's contents.

Layer: io.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import tempfile

from agentpost.errors import InfraError
from agentpost.sandbox.hostfs import MountTable, archive, bounds_for, unarchive
from agentpost.sandbox.limits import usage_bytes

DISK_POLL_S = 2.0


class VolumeLayout:
    def __init__(self, backend, container: str, writable_dirs: tuple[str, ...],
                 disk_bytes: int | None = None):  # fmt: skip
        self.bounds = bounds_for(disk_bytes)
        raw = backend.cli("inspect", "--format", "{{json .Mounts}}", container, timeout_s=60)
        volumes = [
            m for m in json.loads(raw or "[]") if m.get("Type") == "volume" and m.get("Source")
        ]
        mounts = {m["Destination"]: m["Source"] for m in volumes}
        self.names = {m["Destination"]: m.get("Name", "") for m in volumes}  # docker's names
        self.writable = [posixpath.normpath(w) for w in writable_dirs]
        missing = [p for p in [*self.writable, "/tmp", "/root"] if p not in mounts]
        if missing:
            raise InfraError(f"docker did not mount volumes for {missing} in {container}")
        if not all(os.path.isdir(mounts[p]) for p in self.writable):
            raise InfraError("volume directories are not on this host (a remote daemon?)")
        self.mounts = {w: mounts[w] for w in self.writable}
        self.private = {p: mounts[p] for p in ("/tmp", "/root") if p not in self.mounts}
        self.fs = MountTable(mounts)
        self.host_dirs = [mounts[p] for p in sorted({*self.writable, "/tmp", "/root"})]

    def reset_private(self) -> None:
        """Empty /tmp and the home (call only when no sandbox process runs)."""
        for spath, host in self.private.items():
            _empty(host)
            os.chmod(host, 0o1777 if spath == "/tmp" else 0o700)

    def snapshot(self, dest: str | None) -> str:
        if dest is None:
            fd, dest = tempfile.mkstemp(prefix="agentpost-snap-", suffix=".tar")
            os.close(fd)
        try:
            archive(dest, self.mounts, self.bounds)
        except BaseException:
            os.unlink(dest)
            raise
        return dest

    def restore(self, src: str) -> None:
        with tempfile.TemporaryDirectory(prefix="agentpost-restore-") as staging:
            unarchive(src, staging, self.writable, self.bounds)
            for spath, host in self.mounts.items():
                _empty(host)
                staged = os.path.join(staging, spath.strip("/"))
                if os.path.isdir(staged):
                    _copy_owned(staged, host)


def _empty(host: str) -> None:
    for name in os.listdir(host):
        path = os.path.join(host, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _copy_owned(src: str, dest: str) -> None:
    """Copy ``src``'s contents into ``dest`` keeping links, modes and (as root) owners."""
    shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
    shutil.copystat(src, dest)
    if os.geteuid() != 0:
        return
    for root, dirs, files in os.walk(src):
        for name in [".", *dirs, *files]:
            s = os.path.normpath(os.path.join(root, name))
            st = os.lstat(s)
            d = os.path.join(dest, os.path.relpath(s, src))
            os.lchown(d, st.st_uid, st.st_gid)


class DiskWatch:
    """What a docker sandbox has written since it started: its container layer (overlay2's
    upper directory, on this host) and its volumes, against ``quota`` bytes (0: none). The
    volumes' first contents (Docker copies the image's files in) are the baseline, not writes."""

    def __init__(self, backend, container: str, layout: VolumeLayout, quota: int):
        upper = backend.cli(
            "inspect", "--format", "{{.GraphDriver.Data.UpperDir}}", container,
            timeout_s=60, check=False,
        ).strip()  # fmt: skip
        self.dirs = [d for d in [upper, *layout.host_dirs] if d and os.path.isdir(d)]
        self.quota = quota
        self.base = self.used() if quota else 0

    def used(self) -> int:
        return sum(usage_bytes(d) for d in self.dirs)

    def over(self) -> str | None:
        """ "disk quota" once the sandbox has written more than its quota, else None."""
        if self.quota and self.used() - self.base > self.quota:
            return "disk quota"
        return None

    @property
    def active(self) -> bool:
        return bool(self.quota and self.dirs)
