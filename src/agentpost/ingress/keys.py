"""Keys (relative paths named by hostile data), the size bounds, and the refusals.

A key names a file under some root: ``a/b.txt``, never ``/etc/passwd``, ``../x`` or a name
with a NUL byte. ``normalise_key`` returns the one spelling of a key (``./a//b`` → ``a/b``) or
raises ``UnsafeKey``; nothing is ever resolved lexically (``a/../b`` is refused, not turned into
``b``), because what ``..`` means depends on symlinks the key's author may control.

Layer: pure.
"""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1 << 20
NAME_MAX = 255  # bytes in one component (Linux)


class Refused(Exception):
    """Hostile or malformed data refused before it reached the host. Deliberately neither an
    ``OSError`` nor an ``AgentpostError``: a handler for infrastructure faults must not turn it
    into a retry; each caller decides whose result it is (the agent's, or an input error)."""


class UnsafeKey(Refused):
    """A key that is not a plain relative path (absolute, ``..``, NUL, empty, over-long)."""


class TooLarge(Refused):
    """Over a size bound (apparent size: a sparse file counts at its full length)."""


class LinkRefused(Refused):
    """A symlink, hard link, device or FIFO where a plain file or directory must be."""


@dataclass(frozen=True)
class Bounds:
    """How much one tree (a final /app, a snapshot) may hold: apparent bytes in all, entries."""

    max_bytes: int = 1024 * MiB
    max_entries: int = 200_000

    def __post_init__(self) -> None:
        if self.max_bytes < 0 or self.max_entries < 1:
            raise ValueError(f"bounds must be non-negative: {self}")


def normalise_key(key: object, *, where: str = "key") -> str:
    """The normal spelling of relative path ``key`` (``/``-separated, no empty or ``.``
    components), or ``UnsafeKey`` naming ``where``."""
    if not isinstance(key, str):
        raise UnsafeKey(f"{where}: not a string ({type(key).__name__})")
    if "\x00" in key:
        raise UnsafeKey(f"{where}: {key!r} holds a NUL byte")
    if key.startswith("/"):
        raise UnsafeKey(f"{where}: {key!r} is absolute")
    parts = [p for p in key.split("/") if p not in ("", ".")]
    if not parts:
        raise UnsafeKey(f"{where}: {key!r} names no file")
    if ".." in parts:
        raise UnsafeKey(f"{where}: {key!r} climbs out with '..'")
    for p in parts:
        if len(p.encode("utf-8", "surrogateescape")) > NAME_MAX:
            raise UnsafeKey(f"{where}: a component of {key[:80]!r}... is over {NAME_MAX} bytes")
    return "/".join(parts)


def split_key(key: str) -> list[str]:
    """The components of a normalised key."""
    return key.split("/")


def under(key: str, prefixes: list[str] | tuple[str, ...]) -> bool:
    """Whether normalised ``key`` is one of ``prefixes`` (normalised keys) or below one."""
    return any(key == p or key.startswith(p + "/") for p in prefixes)


def relative_key(path: str, root: str, *, where: str = "path") -> str:
    """Key of absolute ``path`` below absolute ``root`` (``/app/a b`` under ``/app`` → ``a b``),
    or ``UnsafeKey`` when it is not below ``root``."""
    prefix = root.rstrip("/") + "/"
    if not isinstance(path, str) or not path.startswith(prefix):
        raise UnsafeKey(f"{where}: {path!r} is not below {root}")
    return normalise_key(path[len(prefix) :], where=where)
