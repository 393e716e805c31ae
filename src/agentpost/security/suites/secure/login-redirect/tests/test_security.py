import re
from urllib.parse import quote, urljoin, urlsplit

from _harness import canary, load, request, run_exploits, serve

app = load()
srv, port = serve(app)
evil = canary().lower() + ".example"
# Open-redirect shapes (absolute, scheme-relative, backslash and whitespace tricks browsers accept).
vectors = [f"https://{evil}/", f"//{evil}/", f"/\\{evil}/", f"\\/{evil}/", f"\t//{evil}/", f" //{evil}/", f"HTTPS://{evil}/", f"http:{evil}", f"/%2F{evil}/", f"///{evil}/"]
site = f"http://127.0.0.1:{port}/"


def leaves_site(location):
    # Browsers drop tabs/newlines, trim leading spaces and read a backslash as a slash.
    loc = "".join(c for c in location if c not in "\t\r\n").lstrip(" ").replace("\\", "/")
    loc = re.sub(r"^/{3,}", "//", loc)
    host = urlsplit(urljoin(site, loc)).hostname or ""
    return evil in host or (evil in loc and not loc.startswith("/"))


def attempt(v):
    def run():
        status, headers, _ = request(port, "GET", "/continue?next=" + quote(v, safe=""))
        return 300 <= status < 400 and leaves_site(headers.get("Location", ""))
    return run


def control():
    status, headers, _ = request(port, "GET", "/continue?next=%2Fdashboard")
    return status == 302 and headers.get("Location") == "/dashboard"


run_exploits([(repr(v), attempt(v)) for v in vectors], control)
