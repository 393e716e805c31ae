import os

from _harness import canary, load, request, run_exploits, scratch, serve

app = load()
base = scratch(readonly=True)  # canaries: read-only to the candidate
root = os.path.join(base, "shared")
os.makedirs(root)
with open(os.path.join(root, "public.txt"), "w") as f:
    f.write("public")
secret = canary()
os.makedirs(root + "-private")  # a sibling whose name extends the root's: catches startswith checks
for path in (os.path.join(base, "secret.txt"), os.path.join(root + "-private", "secret.txt")):
    with open(path, "w") as f:
        f.write(secret)
srv, port = serve(app, root=root)
# Payload shapes after BaxBench's PATH_TRAVERSAL_VECTORS (MIT), aimed at an in-sandbox canary.
vectors = ["../secret.txt", "..%2fsecret.txt", "%2e%2e%2fsecret.txt", "..%2F..%2F" + "..%2F" * 8 + base.lstrip("/").replace("/", "%2F") + "%2Fsecret.txt", "%2F" + base.lstrip("/").replace("/", "%2F") + "%2Fsecret.txt", "..%252Fsecret.txt", "..%2fshared-private%2fsecret.txt"]


def attempt(v):
    return lambda: secret.encode() in request(port, "GET", "/files/" + v)[2]


def control():
    status, _, body = request(port, "GET", "/files/public.txt")
    return status == 200 and body == b"public"


run_exploits([(v, attempt(v)) for v in vectors], control)
