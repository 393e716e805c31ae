"""Profile card."""

import html
from urllib.parse import urlsplit


def _e(value):
    return html.escape(str(value), quote=True)


def _link(website):
    # Browsers drop ASCII whitespace and control characters around and inside a URL's scheme.
    scheme = urlsplit("".join(c for c in str(website) if c > " ")).scheme.lower()
    if scheme not in ("", "http", "https"):
        return ""  # javascript:, data: and friends never become a link (relative ones may)
    return f'<a href="{_e(website)}">{_e(website)}</a>'


def render_card(profile):
    name, bio = (_e(profile.get(k, "")) for k in ("name", "bio"))
    link = _link(profile.get("website", "")) if profile.get("website") else ""
    return f'<div class="card"><h2>{name}</h2><p>{bio}</p>{link}</div>'
