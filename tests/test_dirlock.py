"""The output-directory lock: one writer, re-entrant in its thread, never left stuck."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from agentpost.dirlock import DirLock
from agentpost.errors import InputError


def test_one_writer_reentrant_in_its_thread_refused_elsewhere(tmp_path) -> None:
    with DirLock(tmp_path), DirLock(tmp_path):  # nested in one thread: shared
        errors = []
        t = threading.Thread(target=lambda: _try(tmp_path, errors))
        t.start()
        t.join()
        assert errors and "another agentpost process" in errors[0]
    with DirLock(tmp_path):  # released by the outer exit, so free again
        pass


def _try(folder, errors) -> None:
    try:
        DirLock(folder).acquire()
    except InputError as e:
        errors.append(str(e))


def test_a_killed_holder_leaves_no_stuck_lock(tmp_path) -> None:
    code = f"from agentpost.dirlock import DirLock; DirLock({str(tmp_path)!r}).acquire(); print('held', flush=True); import time; time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    with pytest.raises(InputError, match=f"pid {proc.pid}"):
        DirLock(tmp_path).acquire()
    proc.kill()
    proc.wait()
    with DirLock(tmp_path):
        pass


def test_an_unwritable_place_is_a_one_line_error(tmp_path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="cannot write here"):
        DirLock(tmp_path / "file" / "out").acquire()


def test_no_lock_file_is_left_behind_and_a_released_lock_is_free(tmp_path) -> None:
    """A finished (or interrupted: the with block unwinds) holder removes .agentpost.lock; the
    next writer still gets the one lock (no ghost lock on an unlinked file)."""
    from agentpost.dirlock import LOCK_NAME

    with DirLock(tmp_path):
        assert (tmp_path / LOCK_NAME).exists()
    assert not (tmp_path / LOCK_NAME).exists()
    try:
        with DirLock(tmp_path):
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert not (tmp_path / LOCK_NAME).exists()
    with DirLock(tmp_path):
        errors = []
        t = threading.Thread(target=lambda: _try(tmp_path, errors))
        t.start()
        t.join()
        assert errors and "another agentpost process" in errors[0]
