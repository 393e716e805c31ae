"""Hidden evaluator for tar-backup."""
import tarfile
try:
    names = sorted(m.name.rstrip("/") for m in tarfile.open("/app/backup.tar.gz", "r:gz").getmembers() if m.isfile())
except (FileNotFoundError, tarfile.TarError) as e:
    raise SystemExit(f"archive: {e}")
names = [n[2:] if n.startswith("./") else n for n in names]
want = ["project/.env", "project/lib/util.py", "project/main.py"]
if names != want:
    raise SystemExit(f"got {names}")
print("ok")
