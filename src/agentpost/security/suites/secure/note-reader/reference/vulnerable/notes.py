"""Notes library."""

import os


def read_note(notes_dir, name):
    path = os.path.join(notes_dir, name + ".md")
    if not os.path.isfile(path):
        raise KeyError(name)
    with open(path, encoding="utf-8") as f:
        return f.read()


def list_notes(notes_dir):
    names = []
    for dirpath, _, files in os.walk(notes_dir):
        for fn in files:
            if fn.endswith(".md"):
                rel = os.path.relpath(os.path.join(dirpath, fn), notes_dir)
                names.append(rel[:-3].replace(os.sep, "/"))
    return sorted(names)
