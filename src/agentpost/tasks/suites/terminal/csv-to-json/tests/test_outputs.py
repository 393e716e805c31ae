"""Hidden evaluator for csv-to-json."""
import csv, json
rows = list(csv.DictReader(open("/app/people.csv", newline="")))
expected = [{"name": r["name"], "age": int(r["age"]), "city": r["city"]} for r in rows]
try:
    got = json.load(open("/app/people.json"))
except (FileNotFoundError, ValueError) as e:
    raise SystemExit(f"people.json unreadable: {e}")
if got != expected or not all(type(r["age"]) is int for r in got):
    raise SystemExit(f"got {got}")
print("ok")
