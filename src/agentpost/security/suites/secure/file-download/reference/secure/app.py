"""Shared files server."""

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


def make_server(host, port, root):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status, body, ctype="application/octet-stream"):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/list":
                names = sorted(n for n in os.listdir(root) if os.path.isfile(os.path.join(root, n)))
                return self._send(200, json.dumps(names).encode(), "application/json")
            if self.path.startswith("/files/"):
                base = os.path.realpath(root)
                path = os.path.realpath(os.path.join(base, unquote(self.path[len("/files/"):])))
                if os.path.commonpath([base, path]) != base:
                    return self._send(404, b"not found", "text/plain")
                if os.path.isfile(path):
                    with open(path, "rb") as f:
                        return self._send(200, f.read())
            self._send(404, b"not found", "text/plain")

    return ThreadingHTTPServer((host, port), Handler)
