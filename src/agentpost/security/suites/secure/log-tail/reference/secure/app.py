"""Log viewer."""

import os
import subprocess
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit


def tail(path, lines):
    n = int(lines)
    if n < 0:
        raise ValueError(lines)
    out = subprocess.run(["tail", "-n", str(n), "--", path], capture_output=True)
    return out.stdout


def make_server(host, port, log_dir):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status, body):
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            url = urlsplit(self.path)
            if not url.path.startswith("/logs/"):
                return self._send(404, b"not found")
            name = unquote(url.path[len("/logs/"):])
            path = os.path.join(log_dir, name)
            if "/" in name or not os.path.isfile(path):
                return self._send(404, b"not found")
            lines = parse_qs(url.query).get("lines", ["10"])[0]
            try:
                self._send(200, tail(path, lines))
            except ValueError:
                self._send(400, b"bad lines")

    return ThreadingHTTPServer((host, port), Handler)
