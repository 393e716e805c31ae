"""A docker sandbox's writable directories, seen from the host: its volumes, or its layer.

A read-only-root sandbox keeps its writable dirs, ``/tmp`` and the home in anonymous volumes;
``docker inspect`` names each volume's host directory. A writable-root sandbox (``layer``:
Harbor's container semantics) keeps them in its container layer instead, beside everything
else it writes, so that they are one filesystem as in Harbor (a test renaming ``/app/x`` to
``/tmp/x`` gets EXDEV across two volumes); the host reaches them through overlay2's merged
directory of the running container, by descent: ``hostfs.MountTable`` with a root mount
(links resolved inside the sandbox, never followed on the host), and, for snapshots and resets,
each dir opened component by component with ``O_NOFOLLOW`` at every use (the agent may have
replaced ``/app`` since: a link there is ``ingress.LinkRefused``, never followed). Docker volumes
the container does have (the verifier's ``/tests`` and ``/logs``) are used as before.

Snapshots are tar files of the writable directories (owners and modes kept, ``/tmp`` and the home
left out, as in bwrap); a restore empties each dir (which Docker filled from the image) and puts
back exactly the snapshot's contents. Departure from Harbor, in both modes: a snapshot holds the
writable dirs only, not what the agent changed elsewhere in a writable root.

Layer: io.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Iterator

from agentpost.errors import InfraError
from agentpost.ingress.hostdir import descend, open_root
from agentpost.sandbox.hostfs import MountTable, archive, bounds_for, unarchive
from agentpost.sandbox.limits import usage_bytes

DISK_POLL_S = 2.0
PRIVATE = ("/tmp", "/root")
_MODES = {"/tmp": 0o1777, "/root": 0o700}


class VolumeLayout:
    """``mounts`` / ``private``: sandbox dir → its volume's host dir, or None for a dir in the
    container layer (``layer``); ``names``: docker's volume names; ``host_dirs``: the volumes'
    host dirs (the layer is measured through its upper dir, ``DiskWatch``)."""

    def __init__(self, backend, container: str, writable_dirs: tuple[str, ...],
                 disk_bytes: int | None = None, *, layer: bool = False):  # fmt: skip
        self.bounds = bounds_for(disk_bytes)
        raw = backend.cli("inspect", "--format", "{{json .Mounts}}", container, timeout_s=60)
        volumes = [
            m for m in json.loads(raw or "[]") if m.get("Type") == "volume" and m.get("Source")
        ]
        found = {m["Destination"]: m["Source"] for m in volumes}
        self.names = {m["Destination"]: m.get("Name", "") for m in volumes}  # docker's names
        self.writable = [posixpath.normpath(w) for w in writable_dirs]
        wanted = [*self.writable, *PRIVATE]
        missing = [p for p in wanted if p not in found]
        if missing and not layer:
            raise InfraError(f"docker did not mount volumes for {missing} in {container}")
        if not all(os.path.isdir(found[p]) for p in wanted if p in found):
            raise InfraError("volume directories are not on this host (a remote daemon?)")
        self.merged = _merged_dir(backend, container) if layer else None
        self.mounts = {w: found.get(w) for w in self.writable}
        self.private = {p: found.get(p) for p in PRIVATE if p not in self.mounts}
        table = {p: found[p] for p in wanted if p in found}
        self.fs = MountTable({"/": self.merged, **table} if layer else table)
        self.host_dirs = sorted(set(table.values()))

    @contextlib.contextmanager
    def host_dir(self, spath: str) -> Iterator[str]:
        """A host path naming sandbox dir ``spath`` for the block: its volume's dir, or the
        layer's dir opened by descent from the merged dir (``/proc/self/fd/N/.``: the kernel
        goes to that very directory, whatever is renamed meanwhile)."""
        host = self.mounts.get(spath) or self.private.get(spath)
        if host is not None:
            yield host
            return
        root = open_root(self.merged)
        try:
            with descend(root, spath.strip("/").split("/"), where=spath) as fd:
                yield f"/proc/self/fd/{fd}/."
        finally:
            os.close(root)

    def reset_private(self) -> None:
        """Empty /tmp and the home (call only when no sandbox process runs); in the layer, a
        link or file the agent left in their place is replaced by a fresh directory."""
        for spath in self.private:
            if self.private[spath] is None:
                self._make_dir(spath)
            with self.host_dir(spath) as host:
                _empty(host)
                os.chmod(host, _MODES[spath])

    def _make_dir(self, spath: str) -> None:
        parent, name = posixpath.split(spath)
        root = open_root(self.merged)
        try:
            with descend(root, [p for p in parent.split("/") if p], where=spath) as fd:
                with contextlib.suppress(FileNotFoundError):
                    if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                        os.unlink(name, dir_fd=fd)
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, _MODES[spath], dir_fd=fd)
        finally:
            os.close(root)

    def snapshot(self, dest: str | None) -> str:
        if dest is None:
            fd, dest = tempfile.mkstemp(prefix="agentpost-snap-", suffix=".tar")
            os.close(fd)
        try:
            with contextlib.ExitStack() as stack:
                dirs = {}
                for w, volume in self.mounts.items():
                    try:
                        dirs[w] = stack.enter_context(self.host_dir(w))
                    except FileNotFoundError:
                        if volume is not None:
                            raise
                        # the agent removed it from its layer: that is its state (restored
                        # as an empty dir), no fault of ours
                archive(dest, dirs, self.bounds)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):  # (refused before the tar was made)
                os.unlink(dest)
            raise
        return dest

    def restore(self, src: str) -> None:
        with tempfile.TemporaryDirectory(prefix="agentpost-restore-") as staging:
            unarchive(src, staging, self.writable, self.bounds)
            for spath in self.mounts:
                with self.host_dir(spath) as host:
                    _empty(host)
                    staged = os.path.join(staging, spath.strip("/"))
                    if os.path.isdir(staged):
                        _copy_owned(staged, host)


def _merged_dir(backend, container: str) -> str:
    """overlay2's merged directory of a running container: its root as the host sees it."""
    merged = backend.cli(
        "inspect", "--format", "{{.GraphDriver.Data.MergedDir}}", container, timeout_s=60,
        check=False,
    ).strip()  # fmt: skip
    if not merged or merged == "<no value>" or not os.path.ismount(merged):
        state = backend.cli(
            "inspect", "--format", "{{.State.Running}} {{.State.ExitCode}}", container,
            timeout_s=60, check=False,
        ).split()  # fmt: skip
        if state[:1] == ["false"]:  # it stopped at once: its root cannot run (e.g. no /usr)
            raise InfraError(
                f"{container} is not running (exit {state[1] if len(state) > 1 else '?'}) just after it started: "
                "its root cannot run the executor or the keeper"
            )
        raise InfraError(
            f"docker shows no mounted overlay2 root for {container} ({merged or 'none'}): a "
            "writable-root sandbox needs the overlay2 storage driver on this host"
        )
    return merged


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


LAYER_STATE_MAX = 1000  # entries; past it the layer counts as changed


def upper_dir(backend, container: str) -> str:
    """overlay2's upper directory of ``container`` (its own writes), "" when docker names none."""
    return backend.cli(
        "inspect", "--format", "{{.GraphDriver.Data.UpperDir}}", container,
        timeout_s=60, check=False,
    ).strip()  # fmt: skip


def layer_state(backend, container: str) -> dict[str, tuple] | None:
    """What ``container``'s layer holds, entry by entry (its upper dir, read on the host with
    ``lstat``, never following a link): type and mode, owner, size, mtime, device number and
    every xattr (overlay's opaque-dir mark among them, and whiteouts are device nodes), the
    upper dir itself as ``.``; None when unknown or past ``LAYER_STATE_MAX`` entries. Equal to
    the state right after set-up, the layer holds nothing of the agent's (an ``/app`` emptied
    and made again, re-moded or replaced by a link all differ)."""
    upper = upper_dir(backend, container)
    if not upper or not os.path.isdir(upper):
        return None
    try:
        return _layer_state(upper)
    except (OSError, RecursionError):  # a dir it could not list, a tree too deep: unknown
        return None


def _layer_state(upper: str) -> dict[str, tuple] | None:
    state: dict[str, tuple] = {}
    for root, dirs, files in os.walk(upper, onerror=_raise):
        for name in ([] if root != upper else ["."]) + dirs + files:
            path = os.path.normpath(os.path.join(root, name))
            st = os.lstat(path)
            keys = sorted(os.listxattr(path, follow_symlinks=False))
            xattrs = tuple((k, os.getxattr(path, k, follow_symlinks=False)) for k in keys)
            state[os.path.relpath(path, upper)] = (
                st.st_mode, st.st_uid, st.st_gid, st.st_size, st.st_mtime_ns, st.st_rdev, xattrs
            )  # fmt: skip
            if len(state) > LAYER_STATE_MAX:
                return None
    return state


def _raise(e: OSError) -> None:
    raise e


class DiskWatch:
    """What a docker sandbox has written since it started: its container layer (overlay2's
    upper directory, on this host) and its volumes, against ``quota`` bytes (0: none). The
    volumes' first contents (Docker copies the image's files in) are the baseline, not writes."""

    def __init__(self, backend, container: str, layout: VolumeLayout, quota: int):
        upper = upper_dir(backend, container)
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
