"""Cookie sessions."""

import base64
import binascii
import pickle


def dump_session(data):
    return base64.urlsafe_b64encode(pickle.dumps(data)).decode()


def load_session(token):
    try:
        return pickle.loads(base64.urlsafe_b64decode(token.encode()))
    except (binascii.Error, pickle.UnpicklingError, EOFError) as e:
        raise ValueError("bad session token") from e
