"""Cookie sessions."""


def dump_session(data: dict) -> str:
    raise NotImplementedError


def load_session(token: str) -> dict:
    raise NotImplementedError
