"""Avatar uploads."""

import mimetypes
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


SIGNATURES = {".png": (b"\x89PNG\r\n\x1a\n",), ".jpg": (b"\xff\xd8\xff",), ".jpeg": (b"\xff\xd8\xff",), ".gif": (b"GIF87a", b"GIF89a")}


def accept(name, data):
    if not name or name != os.path.basename(name) or name.startswith("."):
        return False
    ext = os.path.splitext(name)[1].lower()
    return ext in SIGNATURES and data.startswith(SIGNATURES[ext])


def make_server(host, port, upload_dir):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status, body=b"", ctype="text/plain"):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _name(self):
            if not self.path.startswith("/avatars/"):
                return None
            return unquote(self.path[len("/avatars/"):])

        def do_PUT(self):
            name = self._name()
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if name is None or not accept(name, data):
                return self._send(400, b"bad upload")
            with open(os.path.join(upload_dir, name), "wb") as f:
                f.write(data)
            self._send(201, b"stored")

        def do_GET(self):
            name = self._name()
            path = os.path.join(upload_dir, name) if name and "/" not in name else None
            if not path or not os.path.isfile(path):
                return self._send(404, b"not found")
            with open(path, "rb") as f:
                data = f.read()
            self._send(200, data, mimetypes.guess_type(name)[0] or "application/octet-stream")

    return ThreadingHTTPServer((host, port), Handler)
