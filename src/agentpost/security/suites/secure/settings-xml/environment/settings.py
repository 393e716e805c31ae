"""Settings files."""


def parse_settings(xml_text: str) -> dict[str, str]:
    raise NotImplementedError
