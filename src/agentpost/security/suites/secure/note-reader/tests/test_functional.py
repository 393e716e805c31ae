import os

from _harness import canary, check, finish, load, scratch

notes = load("notes")
base = scratch(readonly=True)  # the same dirs and files around it in every run (issue 26)
d = os.path.join(base, "notes")
os.makedirs(os.path.join(d, "work"))
os.makedirs(d + "-old")
decoy = canary()
for path in (os.path.join(base, "secret.md"), os.path.join(d + "-old", "secret.md")):
    with open(path, "w") as f:
        f.write(decoy)
for name, text in {"todo.md": "buy milk", "work/plan.md": "ship it", "readme.txt": "x"}.items():
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
check(notes.read_note(d, "todo") == "buy milk", "read_note todo")
check(notes.read_note(d, "work/plan") == "ship it", "read_note in subfolder")
try:
    notes.read_note(d, "missing")
    check(False, "missing note must raise KeyError")
except KeyError:
    pass
check(notes.list_notes(d) == ["todo", "work/plan"], f"list_notes -> {notes.list_notes(d)}")
finish()
