"""Hidden evaluator for sales-totals."""
import csv, json
from decimal import Decimal
tot = {}
for r in csv.DictReader(open("/app/sales.csv")):
    tot[r["region"]] = tot.get(r["region"], Decimal(0)) + Decimal(r["amount"])
try:
    raw = open("/app/totals.json").read()
    got = json.loads(raw)
except (FileNotFoundError, ValueError) as e:
    raise SystemExit(f"totals.json: {e}")
if list(got) != sorted(tot):
    raise SystemExit(f"keys: {list(got)}")
for k, v in tot.items():
    if not isinstance(got[k], (int, float)) or Decimal(repr(got[k])) != v:
        raise SystemExit(f"{k}: {got[k]!r} != {v}")
print("ok")
