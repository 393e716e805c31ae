"""Settings files."""

import io
import xml.sax
from xml.sax.handler import feature_external_ges


class _Handler(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.values, self.name, self.buf = {}, None, []

    def startElement(self, tag, attrs):
        if tag == "setting":
            self.name, self.buf = attrs.get("name"), []

    def characters(self, text):
        if self.name is not None:
            self.buf.append(text)

    def endElement(self, tag):
        if tag == "setting" and self.name is not None:
            self.values[self.name] = "".join(self.buf).strip()
            self.name = None


def parse_settings(xml_text):
    parser = xml.sax.make_parser()
    handler = _Handler()
    parser.setContentHandler(handler)
    parser.setFeature(feature_external_ges, True)  # entities may live in shared files
    try:
        parser.parse(io.StringIO(xml_text))
    except xml.sax.SAXParseException as e:
        raise ValueError(str(e)) from e
    return handler.values
