"""Hidden evaluator for fix-textstats."""
import sys
sys.path.insert(0, "/app")
from textstats import mean_word_length, top_word, word_count
cases = [
    (word_count(""), 0), (word_count("   "), 0), (word_count("one"), 1),
    (word_count(" x\t\ty \n z\n"), 3), (word_count("x\ty\nz"), 3), (mean_word_length(""), 0.0),
    (mean_word_length("a bbb"), 2.0), (mean_word_length("ab abc"), 2.5),
    (top_word("x y Y"), "y"), (top_word(""), None),
]
bad = [(i, got, want) for i, (got, want) in enumerate(cases) if got != want]
if bad:
    raise SystemExit(f"failing cases: {bad}")
print("ok")
