"""Hidden evaluator for env-merge."""
want = [
    "APP_ENV=production",
    "DATABASE_URL=postgres://dev:s3cr3t@db.local/app?sslmode=require&connect_timeout=5",
    "LOG_LEVEL=debug",
    "CACHE_TTL=300",
    "FEATURE_FLAGS=search=on,beta=off",
]
try:
    got = [l.rstrip("\n") for l in open("/app/.env") if l.strip()]
except FileNotFoundError:
    raise SystemExit(".env missing")
if got != want:
    raise SystemExit(f"got {got}")
print("ok")
