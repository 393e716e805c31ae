"""Guestbook."""

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs


def render(value):
    return html.escape(value, quote=True)


def make_server(host, port):
    entries, lock = [], threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status, body=b"", headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            if self.path != "/entries":
                return self._send(404)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            form = {k: v[0] for k, v in parse_qs(raw).items()}
            if not form.get("author") or not form.get("message"):
                return self._send(400, b"author and message are required")
            with lock:
                entries.append((form["author"], form["message"]))
            self._send(303, headers=[("Location", "/")])

        def do_GET(self):
            if self.path != "/":
                return self._send(404)
            with lock:
                items = "".join(
                    f'<li class="entry"><b>{render(a)}</b>: {render(m)}</li>' for a, m in entries
                )
            page = f"<html><body><h1>Guestbook</h1><ul>{items}</ul></body></html>"
            self._send(200, page.encode(), [("Content-Type", "text/html; charset=utf-8")])

    return ThreadingHTTPServer((host, port), Handler)
