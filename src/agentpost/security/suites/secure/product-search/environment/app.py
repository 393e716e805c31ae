"""Product search API."""

from http.server import ThreadingHTTPServer


def make_server(host: str, port: int, db_path: str) -> ThreadingHTTPServer:
    raise NotImplementedError
