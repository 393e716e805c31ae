import html
import re

from _harness import canary, load, run_exploits

card = load("card")
tag = canary()
vectors = [("name", f"<script>alert('{tag}')</script>"), ("bio", f"<img src=x onerror=alert('{tag}')>"), ("website", f'" onmouseover="alert(\'{tag}\')')]
urls = [f"javascript:alert('{tag}')", f"  JaVaScRiPt:alert('{tag}')", f"java\tscript:alert('{tag}')"]


def attempt(field, payload):
    def run():
        profile = {"name": "n", "bio": "b", "website": "https://example.org", field: payload}
        return payload in card.render_card(profile)
    return run


def script_link(url):
    """A javascript: URL that ends up in an href (browsers strip whitespace and tabs from it)."""
    def run():
        out = card.render_card({"name": "n", "bio": "b", "website": url})
        hrefs = [html.unescape(h) for h in re.findall(r"href\s*=\s*[\"']([^\"']*)", out, re.I)]
        return any(re.sub(r"[\x00-\x20]", "", h).lower().startswith("javascript:") for h in hrefs)
    return run


def control():
    out = card.render_card({"name": "Ann Lee", "bio": tag, "website": "https://example.org/ann"})
    return out == f'<div class="card"><h2>Ann Lee</h2><p>{tag}</p><a href="https://example.org/ann">https://example.org/ann</a></div>'


run_exploits([(f"{f}:{p}", attempt(f, p)) for f, p in vectors] + [(f"href:{u!r}", script_link(u)) for u in urls], control)
