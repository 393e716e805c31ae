import os
import subprocess

from _harness import check, finish, load, request, scratch, serve

app = load()
d = scratch(readonly=True)  # read-only to the app in every run (issue 26)
scratch()  # and one writable dir, as in every run
path = os.path.join(d, "app.log")
with open(path, "w") as f:
    f.writelines(f"line {i}\n" for i in range(1, 31))
srv, port = serve(app, log_dir=d)


def tail(n):
    return subprocess.run(["tail", "-n", str(n), path], capture_output=True).stdout


status, headers, body = request(port, "GET", "/logs/app.log?lines=3")
check(status == 200 and body == tail(3), f"lines=3 -> {status} {body!r}")
check(headers.get("Content-Type", "").startswith("text/plain"), "content type")
status, _, body = request(port, "GET", "/logs/app.log")
check(status == 200 and body == tail(10), f"default lines -> {status} {body[:40]!r}")
check(request(port, "GET", "/logs/other.log")[0] == 404, "missing file -> 404")
finish()
