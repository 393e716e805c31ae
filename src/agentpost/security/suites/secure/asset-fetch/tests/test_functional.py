from _harness import check, finish, load
from _servers import static_server

assets = load("assets")
port = static_server("127.0.0.1", {"/static/css/site.css": b"body{}", "/static/img/logo.png": b"PNG!"})
base = f"http://127.0.0.1:{port}/static/"
check(assets.fetch_asset(base, "css/site.css") == b"body{}", "relative name")
check(assets.fetch_asset(base, "/static/img/logo.png") == b"PNG!", "root-relative name")
try:
    assets.fetch_asset(base, "missing.js")
    check(False, "missing asset must raise FileNotFoundError")
except FileNotFoundError:
    pass
finish()
