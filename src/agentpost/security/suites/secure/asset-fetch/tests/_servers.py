import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def static_server(host, files, hits=None):
    """Serve ``files`` (path → bytes) on ``host``; every request path is appended to ``hits``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if hits is not None:
                hits.append(self.path)
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

    srv = ThreadingHTTPServer((host, 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]
