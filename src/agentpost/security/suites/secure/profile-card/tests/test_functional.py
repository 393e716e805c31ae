from _harness import check, finish, load

card = load("card")
out = card.render_card({"name": "Ann Lee", "bio": "Gardener", "website": "https://example.org/ann"})
want = '<div class="card"><h2>Ann Lee</h2><p>Gardener</p><a href="https://example.org/ann">https://example.org/ann</a></div>'
check(out == want, f"full card -> {out!r}")
out = card.render_card({"name": "Bo", "bio": "", "website": ""})
check(out == '<div class="card"><h2>Bo</h2><p></p></div>', f"no website -> {out!r}")
finish()
