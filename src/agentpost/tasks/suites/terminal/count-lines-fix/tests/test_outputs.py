"""Hidden evaluator for count-lines-fix."""
import os, subprocess, tempfile
with tempfile.TemporaryDirectory() as t:
    files = {"x.txt": 4, "y z.txt": 2, "deep er/one/w.txt": 5, "deep er/n.md": 7, "q/r s/t.txt": 1}
    for p, n in files.items():
        os.makedirs(os.path.dirname(os.path.join(t, p)), exist_ok=True)
        open(os.path.join(t, p), "w").write("l\n" * n)
    out = subprocess.run(["bash", "/app/count_lines.sh", t], capture_output=True, text=True, timeout=10).stdout.strip()
    if out != "12":
        raise SystemExit(f"got {out!r}, want 12")
out = subprocess.run(["bash", "/app/count_lines.sh", "/app/sample"], capture_output=True, text=True, timeout=10).stdout.strip()
if out != "6":
    raise SystemExit(f"sample: got {out!r}, want 6")
print("ok")
