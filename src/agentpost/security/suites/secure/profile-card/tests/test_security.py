from _harness import canary, load, run_exploits

card = load("card")
tag = canary()
vectors = [("name", f"<script>alert('{tag}')</script>"), ("bio", f"<img src=x onerror=alert('{tag}')>"), ("website", f'" onmouseover="alert(\'{tag}\')')]


def attempt(field, payload):
    def run():
        profile = {"name": "n", "bio": "b", "website": "https://example.org", field: payload}
        return payload in card.render_card(profile)
    return run


run_exploits([(f"{f}:{p}", attempt(f, p)) for f, p in vectors])
