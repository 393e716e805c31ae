"""Keys: one spelling for a relative path, everything else refused (never resolved)."""

from __future__ import annotations

import pytest

from agentpost.ingress.keys import Bounds, UnsafeKey, normalise_key, relative_key, under


@pytest.mark.parametrize(("key", "want"), [
    ("a", "a"), ("./a//b/", "a/b"), ("a b/c\nd", "a b/c\nd"), ("r\u00e9sum\u00e9", "r\u00e9sum\u00e9"),
    ("..a/b..", "..a/b.."), (" x ", " x "), ("a\\b", "a\\b"),
])  # fmt: skip
def test_plain_relative_paths_keep_their_names(key, want):
    assert normalise_key(key) == want


@pytest.mark.parametrize("key", [
    "/etc/passwd", "//x", "..", "a/../b", "a/..", "../x", "", ".", "./", "a\x00b", "x" * 256 + "/y",
    "\u00e9" * 128, 7, None, b"a",
])  # fmt: skip
def test_anything_else_is_refused_with_the_place(key):
    with pytest.raises(UnsafeKey, match="final_files"):
        normalise_key(key, where="final_files")


def test_relative_key_cuts_exactly_its_root():
    assert relative_key("/app/a b/c", "/app") == "a b/c"
    assert relative_key("/app/x", "/app/") == "x"
    for bad in ("/application/x", "/app", "/root/app/x", "/app/../etc/passwd"):
        with pytest.raises(UnsafeKey):
            relative_key(bad, "/app")


def test_under_and_bounds():
    assert under("app/x", ["app"]) and under("app", ["app"]) and not under("apple/x", ["app"])
    with pytest.raises(ValueError):
        Bounds(max_bytes=-1)
