"""A sandbox's files, listed and read through the sandbox's own interface.

The listing travels NUL-separated (``find -printf '%s/%P\\0'``: apparent size, a slash, the
path relative to the root), so a file or directory whose name holds a space or a newline is one
entry, never two; each entry is checked as a key (``keys.relative_key``) before anything uses
it, and the apparent sizes are summed against the bound *before* a byte is read. Each file is
then read with ``Sandbox.get`` (which resolves symlinks inside the sandbox only and opens
regular files only), again bounded.

What a listing leaves out is said, not hidden: ``SandboxFiles.omitted`` names each file that
was listed but could not be read as text-safe bytes (gone, not regular, a name that is not
UTF-8 on the wire).

Layer: io.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from agentpost.ingress.keys import Bounds, TooLarge, UnsafeKey, normalise_key

SKIP_DIRS = ("__pycache__",)


@dataclass
class SandboxFiles:
    """``files``: {key: bytes} below the root; ``omitted``: {key: why} for entries not read."""

    files: dict[str, bytes] = field(default_factory=dict)
    omitted: dict[str, str] = field(default_factory=dict)


def listing_command(root: str, skip: tuple[str, ...] = SKIP_DIRS) -> str:
    """The shell command whose stdout ``parse_listing`` reads (regular files only, not
    following symlinks, ``skip`` dirs pruned)."""
    prune = " -o ".join(f"-name {shlex.quote(s)}" for s in skip)
    head = f"find {shlex.quote(root)} -mindepth 1"
    body = "-type f -printf '%s/%P\\0'"
    return f"{head} \\( -type d \\( {prune} \\) -prune \\) -o {body}" if skip else f"{head} {body}"


def parse_listing(stdout: str) -> list[tuple[str, int]]:
    """``[(key, apparent size)]`` from ``listing_command``'s output; a record that is not
    ``<digits>/<key>`` is ``UnsafeKey`` (the listing is not what we asked for)."""
    out = []
    for rec in stdout.split("\0"):
        if not rec:
            continue
        size, sep, rel = rec.partition("/")
        if not sep or not size.isdigit():
            raise UnsafeKey(f"listing record {rec[:80]!r} is not <size>/<path>")
        out.append((normalise_key(rel, where=f"listed file {rel[:200]!r}"), int(size)))
    return out


def read_sandbox_tree(sb: Any, root: str, *, bounds: Bounds = Bounds(),
                      timeout_s: float = 60.0) -> SandboxFiles:  # fmt: skip
    """Every regular file below sandbox dir ``root`` of live sandbox ``sb`` → ``SandboxFiles``
    (``TooLarge`` when the listed apparent sizes pass ``bounds``: the caller decides whose
    result that is)."""
    res = sb.exec(listing_command(root), timeout_s=timeout_s)
    if res.timed_out or res.truncated:
        raise TooLarge(f"{root}: the listing did not finish (timed out or over the output cap)")
    entries = parse_listing(res.stdout)
    if len(entries) > bounds.max_entries:
        raise TooLarge(f"{root}: {len(entries)} files, over {bounds.max_entries}")
    total = sum(size for _, size in entries)
    if total > bounds.max_bytes:
        raise TooLarge(f"{root}: {total} bytes of files (apparent size), over {bounds.max_bytes}")
    out = SandboxFiles()
    left = bounds.max_bytes
    for key, _size in sorted(entries):
        if "\ufffd" in key:  # the name was not UTF-8: the wire replaced bytes, get() cannot find it
            out.omitted[key] = "name is not UTF-8"
            continue
        try:
            data = sb.get(f"{root.rstrip('/')}/{key}", max_bytes=left)
        except FileNotFoundError:
            out.omitted[key] = "gone"
            continue
        except PermissionError as e:  # not a regular file, or resolves outside the sandbox
            out.omitted[key] = str(e)[:200]
            continue
        left -= len(data)
        out.files[key] = data
    return out
