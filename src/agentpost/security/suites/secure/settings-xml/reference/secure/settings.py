"""Settings files."""

import re
import xml.etree.ElementTree as ET

_EXTERNAL = re.compile(r"<!ENTITY[^>]*\b(SYSTEM|PUBLIC)\b", re.IGNORECASE)


def parse_settings(xml_text):
    if _EXTERNAL.search(xml_text):
        raise ValueError("external entities are not allowed")
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as e:
        raise ValueError(str(e)) from e
    return {el.get("name"): (el.text or "").strip() for el in root.iter("setting")}
