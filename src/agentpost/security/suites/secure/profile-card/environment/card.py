"""Profile card."""


def render_card(profile: dict) -> str:
    raise NotImplementedError
