"""Documents API."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def visible(doc, user):
    return doc is not None


def make_server(host, port, tokens):
    docs, lock = {}, threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status, obj):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _user(self):
            auth = self.headers.get("Authorization", "")
            return tokens.get(auth[7:]) if auth.startswith("Bearer ") else None

        def do_POST(self):
            user = self._user()
            if user is None:
                return self._send(401, {"error": "unauthorized"})
            if self.path != "/docs":
                return self._send(404, {"error": "not found"})
            try:
                data = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                title, body = str(data["title"]), str(data["body"])
            except (ValueError, KeyError, TypeError):
                return self._send(400, {"error": "bad request"})
            with lock:
                doc_id = len(docs) + 1
                docs[doc_id] = {"id": doc_id, "title": title, "body": body, "owner": user}
            self._send(201, {"id": doc_id})

        def do_GET(self):
            user = self._user()
            if user is None:
                return self._send(401, {"error": "unauthorized"})
            if self.path == "/docs":
                with lock:
                    mine = [{"id": d["id"], "title": d["title"]} for d in docs.values() if d["owner"] == user]
                return self._send(200, mine)
            doc = None
            if self.path.startswith("/docs/") and self.path[6:].isdigit():
                with lock:
                    doc = docs.get(int(self.path[6:]))
            if not visible(doc, user):
                return self._send(404, {"error": "not found"})
            self._send(200, doc)

    return ThreadingHTTPServer((host, port), Handler)
