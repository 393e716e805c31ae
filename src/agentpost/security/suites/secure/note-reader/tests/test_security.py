import os

from _harness import canary, load, run_exploits, scratch

notes = load("notes")
base = scratch(readonly=True)  # canaries: read-only to the candidate
d = os.path.join(base, "notes")
os.makedirs(d)
secret = canary()
os.makedirs(d + "-old")  # a sibling whose name extends notes_dir's: catches startswith checks
for path in (os.path.join(base, "secret.md"), os.path.join(d + "-old", "secret.md")):
    with open(path, "w") as f:
        f.write(secret)


def attempt(name):
    def run():
        try:
            return secret in str(notes.read_note(d, name))
        except (KeyError, ValueError, OSError):
            return False
    return run


vectors = ["../secret", "work/../../secret", os.path.join(base, "secret"), "../" * 10 + base.lstrip("/") + "/secret", "../notes-old/secret"]


with open(os.path.join(d, "todo.md"), "w") as f:
    f.write("benign " + secret[::-1])


def control():
    return notes.read_note(d, "todo") == "benign " + secret[::-1]


run_exploits([(v, attempt(v)) for v in vectors], control)
