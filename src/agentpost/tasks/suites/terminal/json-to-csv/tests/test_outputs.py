"""Hidden evaluator for json-to-csv."""
import csv, json
orders = sorted(json.load(open("/app/orders.json")), key=lambda o: int(o["id"]))
expected = [["id", "customer", "total", "item_count"]] + [
    [str(o["id"]), o["customer"], f"{o['total']:.2f}", str(len(o["items"]))] for o in orders]
try:
    got = [r for r in csv.reader(open("/app/orders.csv", newline="")) if r]
except FileNotFoundError:
    raise SystemExit("orders.csv missing")
if got != expected:
    raise SystemExit(f"got {got[:4]}...")
print("ok")
