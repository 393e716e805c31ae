import os

from _harness import check, finish, load, request, scratch, serve

app = load()
d = scratch()
srv, port = serve(app, upload_dir=d)
png = b"\x89PNG\r\n\x1a\n" + os.urandom(64)
gif = b"GIF89a" + os.urandom(32)
for name, data, ctype in [("ann.png", png, "image/png"), ("bob.gif", gif, "image/gif")]:
    status, _, _ = request(port, "PUT", f"/avatars/{name}", data)
    check(status == 201, f"PUT {name} -> {status}")
    status, headers, body = request(port, "GET", f"/avatars/{name}")
    check(status == 200 and body == data and headers.get("Content-Type") == ctype, f"GET {name} -> {status} {headers.get('Content-Type')}")
check(request(port, "PUT", "/avatars/empty.png", b"")[0] == 400, "empty body -> 400")
check(request(port, "GET", "/avatars/none.png")[0] == 404, "missing -> 404")
finish()
