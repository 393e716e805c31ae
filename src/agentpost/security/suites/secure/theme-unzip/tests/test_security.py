import os

from _harness import canary, load, run_exploits, scratch
from _zips import make_zip

themes = load("themes")
tag = canary().encode()


def slip(entry_for):
    def run():
        base = scratch()
        root = os.path.join(base, "themes")
        os.makedirs(os.path.join(base, "themes", "ocean-old"))  # a sibling that extends the theme name
        try:
            themes.install_theme(make_zip([("css/ok.css", b"ok"), (entry_for(base), tag)]), root, "ocean")
        except Exception:  # noqa: BLE001 - refusing is fine; the file system decides
            pass
        theme = os.path.join(root, "ocean")
        for r, _, names in os.walk(base):
            for n in names:
                p = os.path.join(r, n)
                if os.path.commonpath([theme, p]) != theme and open(p, "rb").read() == tag:
                    return True
        return False
    return run


def control():
    root = os.path.join(scratch(), "themes")
    got = themes.install_theme(make_zip([("css/a.css", tag)]), root, "calm")
    with open(os.path.join(root, "calm", "css", "a.css"), "rb") as f:
        return got == ["css/a.css"] and f.read() == tag


run_exploits([
    ("dotdot", slip(lambda b: "../evil.css")),
    ("nested-dotdot", slip(lambda b: "css/../../../evil.css")),
    ("absolute", slip(lambda b: os.path.join(b, "evil.css"))),
    ("sibling", slip(lambda b: "../ocean-old/evil.css")),
], control)
