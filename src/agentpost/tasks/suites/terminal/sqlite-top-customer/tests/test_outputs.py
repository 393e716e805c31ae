"""Hidden evaluator for sqlite-top-customer."""
got = open("/app/top_customer.txt").read().split() if __import__("os").path.exists("/app/top_customer.txt") else None
if got != ["bob", "215.50"]:
    raise SystemExit(f"got {got}")
print("ok")
