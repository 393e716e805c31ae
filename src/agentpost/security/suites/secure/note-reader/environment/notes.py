"""Notes library."""


def read_note(notes_dir: str, name: str) -> str:
    raise NotImplementedError


def list_notes(notes_dir: str) -> list[str]:
    raise NotImplementedError
