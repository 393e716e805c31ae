"""The result store: keyed by inputs, nothing computed twice, never half-written."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentpost.store import Store, key


def test_key_is_stable_and_order_independent() -> None:
    assert key("judge", {"a": 1, "b": [1, 2]}) == key("judge", {"b": [1, 2], "a": 1})
    assert key("judge", {"a": 1}) != key("judge", {"a": 2})
    assert key("judge", {"a": 1}) != key("replay", {"a": 1})
    assert key("judge", {"a": 1}).startswith("judge:")
    with pytest.raises(ValueError):
        key("a:b", {})


def test_get_or_compute_computes_once(tmp_path) -> None:
    store = Store(tmp_path / "s.sqlite")
    calls = []

    def compute():
        calls.append(1)
        return {"reward": 1.0, "items": [1, 2, 3]}

    first = store.get_or_compute("replay", {"traj": "x"}, compute)
    second = Store(tmp_path / "s.sqlite").get_or_compute("replay", {"traj": "x"}, compute)
    assert first == second == {"reward": 1.0, "items": [1, 2, 3]}
    assert len(calls) == 1
    assert store.count("replay") == 1
    assert store.count() == 1


def test_threads_share_a_store(tmp_path) -> None:
    store = Store(tmp_path / "s.sqlite")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: store.put(key("k", i), {"i": i}), range(200)))
    assert store.count("k") == 200
    assert sorted(v["i"] for _, v in store.items("k")) == list(range(200))


def test_killed_writer_leaves_only_whole_entries(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    Store(path)
    writer = textwrap.dedent(
        f"""
        from agentpost.store import Store, key
        s = Store({str(path)!r})
        i = 0
        while True:
            s.put(key("w", i), {{"i": i, "payload": "x" * 5000}})
            i += 1
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", writer])
    deadline = time.time() + 20
    while Store(path).count("w") < 20 and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    store = Store(path)
    n = store.count("w")
    assert n >= 20
    values = dict(store.items("w"))
    assert len(values) == n
    for v in values.values():
        assert v["payload"] == "x" * 5000
    # the writer resumes where it stopped: existing keys are found, not recomputed
    assert store.get(key("w", 0)) == {"i": 0, "payload": "x" * 5000}


def test_stored_none_is_found_not_recomputed(tmp_path) -> None:
    store = Store(tmp_path / "s.sqlite")
    calls = []
    for _ in range(3):
        assert store.get_or_compute("judge", {"q": 1}, lambda: calls.append(1)) is None
    assert len(calls) == 1
    assert store.get("judge:missing", "absent") == "absent"


def test_unopenable_store_is_an_input_error(tmp_path) -> None:
    from agentpost.errors import InputError

    (tmp_path / "junk.sqlite").write_bytes(b"this is not a database" * 100)
    for bad in (tmp_path, tmp_path / "junk.sqlite"):
        with pytest.raises(InputError) as e:
            Store(bad)
        assert str(bad) in str(e.value) and "cannot open the result store" in str(e.value)


def test_a_new_thread_connection_keeps_the_other_threads_locks(tmp_path):
    """Closing any fd of the database drops every POSIX lock the process holds on it. When a
    thread's connection was checked by opening the file, the other threads' connections lost
    their locks; a reader in another process then closed as if it were the last connection,
    checkpointed and deleted the WAL, and a later write went to the unlinked WAL: lost
    (scvd collect's rows vanished this way while a test polled the store)."""
    import subprocess
    import sys
    import threading

    from agentpost.store import Store

    db = tmp_path / "store.sqlite"
    s = Store(db)
    s.put("a:1", 1)  # the main thread's connection, holding its lock on the file

    def in_thread() -> None:
        s.put("b:1", 2)  # a second connection: opened (and checked) in this thread

    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    read = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "print(c.execute('SELECT count(*) FROM results').fetchone()[0]); c.close()")  # fmt: skip
    subprocess.run([sys.executable, "-c", read, str(db)], check=True, capture_output=True)
    s.put("c:1", 3)  # after the other process's reader has closed
    out = subprocess.run([sys.executable, "-c", read, str(db)], check=True,
                         capture_output=True, text=True)  # fmt: skip
    assert out.stdout.strip() == "3"
    assert (tmp_path / "store.sqlite-wal").exists()
