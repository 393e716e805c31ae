from urllib.parse import urlencode

from _harness import check, finish, load, request, serve

app = load()
srv, port = serve(app)
form = {"Content-Type": "application/x-www-form-urlencoded"}
for author, msg in [("Ann", "Lovely place"), ("Bob", "Great food 10 of 10")]:
    status, headers, _ = request(port, "POST", "/entries", urlencode({"author": author, "message": msg}), form)
    check(status == 303 and headers.get("Location") == "/", f"POST /entries -> {status} {headers.get('Location')}")
status, _, _ = request(port, "POST", "/entries", urlencode({"author": "x"}), form)
check(status == 400, f"missing message -> {status}")
status, headers, body = request(port, "GET", "/")
page = body.decode()
check(status == 200 and headers.get("Content-Type", "").startswith("text/html"), f"GET / -> {status}")
check("<h1>Guestbook</h1>" in page, "title")
check('<li class="entry"><b>Ann</b>: Lovely place</li>' in page, "first entry rendered")
check(page.find("Ann") < page.find("Bob"), "oldest first")
finish()
