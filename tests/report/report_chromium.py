"""Drive headless Chromium over the DevTools protocol (``--remote-debugging-pipe``) to load a
report offline, collect console errors and network requests, locate every plot and take a
full-page screenshot. Used by the report tests; no third-party client is needed.

Layer: io (test helper).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]
PLOTS_JS = """JSON.stringify([...document.querySelectorAll('svg.plot')].map(s => {
  const b = s.getBoundingClientRect();
  return [b.left + window.scrollX, b.top + window.scrollY, b.width, b.height,
          s.querySelectorAll('rect,line,circle,polyline,text').length];
}))"""


# after opening every <details>: tables wider than their container (they would scroll sideways)
OVERFLOW_JS = """(document.querySelectorAll('details').forEach(d => d.open = true),
  JSON.stringify([...document.querySelectorAll('.tw')]
    .filter(d => d.scrollWidth > d.clientWidth + 1)
    .map(d => [d.scrollWidth, d.clientWidth, d.innerText.slice(0, 80)])))"""


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


@dataclass
class PageResult:
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    plots: list[list[float]] = field(default_factory=list)
    overflowing_tables: list[list] = field(default_factory=list)
    screenshot_png: bytes = b""


class _Pipe:
    def __init__(self, binary: str, user_dir: str):
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4: park our ends above them.
        hi_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 100)
        hi_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 100)
        os.close(to_chrome_r)
        os.close(from_chrome_w)

        def child() -> None:
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={user_dir}", "about:blank"],
            preexec_fn=child,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(hi_r)
        os.close(hi_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def call(
        self,
        method: str,
        params: dict | None = None,
        session: str | None = None,
        timeout: float = 30.0,
    ) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self._buf:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"chromium did not answer {method}")
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"chromium closed the pipe during {method}")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            d = json.loads(raw)
            if d.get("id") == self._id:
                if "error" in d:
                    raise RuntimeError(f"{method}: {d['error']}")
                return d.get("result", {})
            self.events.append(d)

    def close(self) -> None:
        try:
            os.write(self._w, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)


def _errors(events: list[dict]) -> list[str]:
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append(str(p.get("args")))
        elif m == "Runtime.exceptionThrown":
            out.append(str(p.get("exceptionDetails")))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(p["entry"].get("text", ""))
    return out


def run_steps(
    html_path: Path, binary: str, steps: list[str], width: int = 1200
) -> tuple[list, list[str]]:
    """Open ``html_path``, then evaluate each JavaScript expression of ``steps`` in turn (a
    user's clicks and reads); returns each step's value (JSON-able) and the console errors.
    Between steps the page gets a moment to react (hashchange handlers run asynchronously)."""
    user_dir = tempfile.mkdtemp(prefix="agentpost-chromium-")
    pipe = _Pipe(binary, user_dir)
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        sid = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for m in ("Page.enable", "Runtime.enable", "Log.enable"):
            pipe.call(m, session=sid)
        pipe.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=sid,
        )
        pipe.call("Page.navigate", {"url": html_path.resolve().as_uri()}, session=sid)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in pipe.events):
            if time.monotonic() > deadline:
                raise TimeoutError("report did not finish loading")
            pipe.call("Runtime.evaluate", {"expression": "1"}, session=sid)
        values = []
        for expr in steps:
            r = pipe.call(
                "Runtime.evaluate",
                {"expression": expr, "returnByValue": True, "awaitPromise": True},
                session=sid,
            )
            if "exceptionDetails" in r:
                raise RuntimeError(f"step failed: {expr}: {r['exceptionDetails']}")
            values.append(r.get("result", {}).get("value"))
            time.sleep(0.05)
        return values, _errors(pipe.events)
    finally:
        pipe.close()
        shutil.rmtree(user_dir, ignore_errors=True)


def load_report(html_path: Path, binary: str, width: int = 1200) -> PageResult:
    """Open ``html_path`` (file://), wait for load, and report what happened."""
    user_dir = tempfile.mkdtemp(prefix="agentpost-chromium-")
    pipe = _Pipe(binary, user_dir)
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        sid = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for m in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            pipe.call(m, session=sid)
        pipe.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=sid,
        )
        pipe.call("Page.navigate", {"url": html_path.resolve().as_uri()}, session=sid)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in pipe.events):
            if time.monotonic() > deadline:
                raise TimeoutError("report did not finish loading")
            pipe.call("Runtime.evaluate", {"expression": "1"}, session=sid)
        res = PageResult()
        plots = pipe.call(
            "Runtime.evaluate", {"expression": PLOTS_JS, "returnByValue": True}, session=sid
        )
        res.plots = json.loads(plots["result"]["value"])
        shot = pipe.call(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True},
            session=sid,
            timeout=60,
        )
        res.screenshot_png = base64.b64decode(shot["data"])
        wide = pipe.call(
            "Runtime.evaluate", {"expression": OVERFLOW_JS, "returnByValue": True}, session=sid
        )
        res.overflowing_tables = json.loads(wide["result"]["value"])
        res.console_errors = _errors(pipe.events)
        for e in pipe.events:
            if e.get("method") == "Network.requestWillBeSent":
                res.requests.append(e.get("params", {}).get("request", {}).get("url", ""))
        return res
    finally:
        pipe.close()
        shutil.rmtree(user_dir, ignore_errors=True)


class Browser:
    """One headless Chromium page to drive step by step (a fresh profile, no network, killed on
    ``close``): ``open`` a report, ``eval`` JavaScript in it, ``wait`` until an expression holds.
    ``errors()``: console errors and uncaught exceptions so far; ``requests()``: every URL the
    page asked for (the report's own files only, never the network)."""

    def __init__(self, binary: str, width: int = 1200) -> None:
        self._user_dir = tempfile.mkdtemp(prefix="agentpost-chromium-")
        self._errors: list[str] = []
        self._requests: list[str] = []
        self._pipe = _Pipe(binary, self._user_dir)
        try:
            target = self._pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._sid = self._pipe.call(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )["sessionId"]
            for m in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
                self._pipe.call(m, session=self._sid)
            self._pipe.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                session=self._sid,
            )
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self, path: Path, fragment: str = "", ready: str | None = None) -> float:
        """Navigate to ``path`` (file://, plus ``#fragment``) and wait for the load event and,
        when given, until the expression ``ready`` is truthy; returns the seconds it took."""
        # from a blank page: a new fragment of the page open now would not load it again
        self._navigate("about:blank", time.monotonic() + 30)
        start = time.monotonic()
        self._navigate(path.resolve().as_uri() + (f"#{fragment}" if fragment else ""), start + 60)
        deadline = start + 60
        if ready:
            self.wait(ready, timeout=max(1.0, deadline - time.monotonic()))
        return time.monotonic() - start

    def _navigate(self, url: str, deadline: float) -> None:
        self._errors += _errors(self._pipe.events)  # kept across pages
        self._requests += self._asked()
        self._pipe.events.clear()
        self._pipe.call("Page.navigate", {"url": url}, session=self._sid)
        while not any(e.get("method") == "Page.loadEventFired" for e in self._pipe.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading")
            self._pipe.call("Runtime.evaluate", {"expression": "1"}, session=self._sid)

    def eval(self, expr: str):
        """The JSON-able value of the expression (a Promise is awaited)."""
        r = self._pipe.call(
            "Runtime.evaluate",
            {"expression": expr, "returnByValue": True, "awaitPromise": True},
            session=self._sid,
            timeout=60,
        )
        if "exceptionDetails" in r:
            raise RuntimeError(f"step failed: {expr}: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    def wait(self, expr: str, timeout: float = 15.0):
        """Evaluate ``expr`` until it is truthy; its value (TimeoutError with the last value)."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.eval(expr)
            if v:
                return v
            if time.monotonic() > deadline:
                raise TimeoutError(f"still {v!r}: {expr}")
            time.sleep(0.02)

    def errors(self) -> list[str]:
        """Console errors and uncaught exceptions of every page opened so far."""
        return self._errors + _errors(self._pipe.events)

    def _asked(self) -> list[str]:
        urls = [e.get("params", {}).get("request", {}).get("url", "")
                for e in self._pipe.events if e.get("method") == "Network.requestWillBeSent"]  # fmt: skip
        return [u for u in urls if u != "about:blank"]

    def requests(self) -> list[str]:
        """Every URL asked for, on every page opened so far (about:blank not counted)."""
        return self._requests + self._asked()

    def close(self) -> None:
        pipe = getattr(self, "_pipe", None)
        if pipe is not None:
            pipe.close()
            self._pipe = None
        shutil.rmtree(self._user_dir, ignore_errors=True)
