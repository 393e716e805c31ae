"""User lookup."""


def find_user(db_path: str, email: str) -> dict | None:
    raise NotImplementedError
