import socket

from _harness import canary, load, request, run_exploits, serve

app = load()
srv, port = serve(app)
tag = canary()
# Header-splitting shapes: CRLF, bare LF and CR (both end a header line for many parsers), and a
# blank line that starts an attacker-chosen body.
vectors = {
    "crlf-set-cookie": f"dark%0d%0aSet-Cookie:%20sid={tag}",
    "lf-header": f"dark%0aX-Extra:%20{tag}",
    "cr-header": f"dark%0dX-Extra:%20{tag}",
    "crlf-body": f"dark%0d%0a%0d%0a<html>{tag}</html>",
    "utf8-encoded-crlf": f"dark%0D%0ALocation:%20http://{tag}.example/",
}


def raw_get(path):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def split(value):
    def run():
        head, _, body = raw_get("/prefs?theme=" + value).partition(b"\r\n\r\n")
        for line in head.replace(b"\r", b"\n").split(b"\n")[1:]:
            if tag.encode() in line and not line.lower().startswith(b"set-cookie: theme="):
                return True
        return tag.encode() in body
    return run


def control():
    status, headers, _ = request(port, "GET", "/prefs?theme=dark")
    return status == 204 and headers.get("Set-Cookie") == "theme=dark; Path=/"


run_exploits([(k, split(v)) for k, v in vectors.items()], control)
