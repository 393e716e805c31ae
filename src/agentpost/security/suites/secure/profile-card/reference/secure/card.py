"""Profile card."""

import html


def _e(value):
    return html.escape(str(value), quote=True)


def render_card(profile):
    name, bio, site = (_e(profile.get(k, "")) for k in ("name", "bio", "website"))
    link = f'<a href="{site}">{site}</a>' if site else ""
    return f'<div class="card"><h2>{name}</h2><p>{bio}</p>{link}</div>'
