from _harness import canary, load, request, run_exploits, scratch, serve

app = load()
srv, port = serve(app, upload_dir=scratch())
tag = canary()
payloads = {
    "x.html": f"<html><script>alert('{tag}')</script></html>",
    "x.svg": f"<svg xmlns='http://www.w3.org/2000/svg' onload=\"alert('{tag}')\"/>",
    "x.py": f"import os; print('{tag}')",
    "x.png.html": f"<script>alert('{tag}')</script>",
    "x.htm": f"<script>alert('{tag}')</script>",
    "x.HTML": f"<script>alert('{tag}')</script>",
    "x.xhtml": f"<html xmlns='http://www.w3.org/1999/xhtml'><script>alert('{tag}')</script></html>",
}


def attempt(name, body):
    def run():
        if request(port, "PUT", f"/avatars/{name}", body)[0] >= 300:
            return False
        status, _, got = request(port, "GET", f"/avatars/{name}")
        return status == 200 and tag.encode() in got
    return run


def control():
    data = b"\x89PNG\r\n\x1a\n" + tag.encode()
    if request(port, "PUT", "/avatars/ok.png", data)[0] != 201:
        return False
    status, headers, body = request(port, "GET", "/avatars/ok.png")
    return status == 200 and body == data and headers.get("Content-Type") == "image/png"


run_exploits([(n, attempt(n, b)) for n, b in payloads.items()], control)
