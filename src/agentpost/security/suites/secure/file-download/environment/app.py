"""Shared files server."""

from http.server import ThreadingHTTPServer


def make_server(host: str, port: int, root: str) -> ThreadingHTTPServer:
    raise NotImplementedError
