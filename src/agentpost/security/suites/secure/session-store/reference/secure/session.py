"""Cookie sessions."""

import base64
import binascii
import json


def dump_session(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode()


def load_session(token):
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (binascii.Error, ValueError) as e:
        raise ValueError("bad session token") from e
    if not isinstance(data, dict):
        raise ValueError("bad session token")
    return data
