import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from _harness import canary, load, run_exploits, scratch

settings = load("settings")
path = os.path.join(scratch(readonly=True), "secret.txt")
secret = canary()
with open(path, "w") as f:
    f.write(secret)
hits = []  # an external entity fetched over HTTP is a finding even when its text is dropped


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", str(len(secret)))
        self.end_headers()
        self.wfile.write(secret.encode())


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
doc = '<?xml version="1.0"?><!DOCTYPE settings [<!ENTITY x SYSTEM "{}">]><settings><setting name="k">&x;</setting></settings>'


def attempt(ref, template=doc):
    def run():
        before = len(hits)
        try:
            leaked = secret in str(settings.parse_settings(template.format(ref)))
        except Exception:  # noqa: BLE001 - an entity fetched before the error is still a finding
            leaked = False
        return leaked or len(hits) > before
    return run


refs = ["file://" + path, path, f"http://127.0.0.1:{srv.server_address[1]}/entity"]
public = doc.replace("SYSTEM", 'PUBLIC "-//agentpost//canary//EN"')


def control():
    benign = '<?xml version="1.0"?><!DOCTYPE settings [<!ENTITY org "ACME">]><settings><setting name="owner">&org; Finance</setting></settings>'
    return settings.parse_settings(benign) == {"owner": "ACME Finance"}


run_exploits([(r, attempt(r)) for r in refs] + [("PUBLIC " + path, attempt(path, public))], control)
