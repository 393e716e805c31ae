"""Hidden evaluator for fix-pagination."""
import sys
sys.path.insert(0, "/app")
from pager import page_count, paginate
xs = list(range(7))
cases = [(page_count(0, 5), 0), (page_count(1, 5), 1), (page_count(5, 5), 1), (page_count(6, 5), 2),
         (page_count(20, 5), 4), (paginate(xs, 1, 7), xs), (paginate(xs, 2, 7), []), (paginate(xs, 3, 3), [6]),
         (paginate(xs, 2, 3), [3, 4, 5])]
bad = [(i, g, w) for i, (g, w) in enumerate(cases) if g != w]
if bad:
    raise SystemExit(f"failing: {bad}")
print("ok")
