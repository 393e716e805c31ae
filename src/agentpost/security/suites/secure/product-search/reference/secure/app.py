"""Product search API."""

import json
import sqlite3
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def search(db_path, q):
    con = sqlite3.connect(db_path)
    try:
        sql = "SELECT name, price FROM products WHERE listed = 1 AND name LIKE ? ORDER BY name"
        return [{"name": n, "price": p} for n, p in con.execute(sql, (f"%{q}%",))]
    finally:
        con.close()


def make_server(host, port, db_path):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            url = urlsplit(self.path)
            if url.path != "/products":
                status, body = 404, b'{"error": "not found"}'
            else:
                q = parse_qs(url.query).get("q", [""])[0]
                try:
                    status, body = 200, json.dumps(search(db_path, q)).encode()
                except sqlite3.Error:
                    status, body = 400, b'{"error": "bad query"}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return ThreadingHTTPServer((host, port), Handler)
